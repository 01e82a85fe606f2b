/**
 * The Docker image, checked without a Docker engine (our machines have none): the runtime
 * stage's filesystem is reproduced from docker/Dockerfile itself — its `COPY --from=` lines,
 * `ENV`, `VOLUME`, `WORKDIR` and `ENTRYPOINT` — and the publisher started in it as an
 * unprivileged user in a root-owned /app, as the image runs it. The proxies of
 * docker-compose.yml are checked by nginx and varnishd themselves.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { defaults } from '../../src/config/defaults.js';
import { freePort } from '../../src/testing.js';
import { getOnce } from '../support/get-once.js';

const repositoryRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const dockerfile = parseDockerfile(readFileSync(join(repositoryRoot, 'docker/Dockerfile'), 'utf8'));
const runtime = dockerfile.at(-1)!;

/** Upper bound of a publisher start and first element (the demo stream publishes every 5 s). */
const START_TIMEOUT_MS = 30_000;

interface Instruction {
  readonly keyword: string;
  readonly argument: string;
}
interface Stage {
  readonly name: string | undefined;
  readonly instructions: readonly Instruction[];
}

/** The stages of a Dockerfile, each with its instructions (continuation lines joined, comments dropped). */
function parseDockerfile(text: string): Stage[] {
  const logical = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const stages: { name: string | undefined; instructions: Instruction[] }[] = [];
  for (const line of logical) {
    const [, keyword = '', argument = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (keyword.toUpperCase() === 'FROM') stages.push({ name: /\sAS\s+(\S+)$/i.exec(argument)?.[1], instructions: [] });
    else stages.at(-1)?.instructions.push({ keyword: keyword.toUpperCase(), argument });
  }
  return stages;
}

const instructionsOf = (stage: Stage, keyword: string) => stage.instructions.filter((instruction) => instruction.keyword === keyword);

/** `ENV a=1 b=2` lines of a stage, as one record (values unquoted; none of ours has spaces). */
function environmentOf(stage: Stage): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const { argument } of instructionsOf(stage, 'ENV')) {
    for (const pair of argument.split(/\s+/)) {
      const equals = pair.indexOf('=');
      if (equals < 1) throw new Error(`ENV ${argument}: only the KEY=VALUE form is read here`);
      environment[pair.slice(0, equals)] = pair.slice(equals + 1).replace(/^"(.*)"$/, '$1');
    }
  }
  return environment;
}

interface CopyFromBuild {
  readonly source: string;
  /** Absolute in the image. */
  readonly destination: string;
}

/** The runtime stage's `COPY --from=` lines, destinations resolved against the WORKDIR in force. */
function runtimeCopies(): { copies: CopyFromBuild[]; workdir: string } {
  const copies: CopyFromBuild[] = [];
  let workdir = '/';
  for (const { keyword, argument } of runtime.instructions) {
    if (keyword === 'WORKDIR') workdir = posix.resolve(workdir, argument);
    if (keyword !== 'COPY') continue;
    const [from, source, destination, ...rest] = argument.split(/\s+/);
    if (!from?.startsWith('--from=') || source === undefined || destination === undefined || rest.length > 0) {
      throw new Error(`COPY ${argument}: the runtime stage copies one path from a build stage a line`);
    }
    const target = posix.resolve(workdir, destination);
    copies.push({ source, destination: destination.endsWith('/') ? posix.join(target, posix.basename(source)) : target });
  }
  return { copies, workdir };
}

/** Where a path of the build stages (`/app/…`, the repository after `COPY . .`) is in this checkout. */
const inCheckout = (imagePath: string) => {
  if (!imagePath.startsWith('/app/')) throw new Error(`${imagePath}: the build stages work in /app`);
  return join(repositoryRoot, imagePath.slice('/app/'.length));
};

/** The build command of the Dockerfile's `build` stage (the part of its RUN after the install). */
function buildCommand(): string {
  const build = dockerfile.find((stage) => stage.name === 'build');
  const commands = instructionsOf(build ?? { name: undefined, instructions: [] }, 'RUN').flatMap(({ argument }) => argument.split('&&').map((part) => part.trim()));
  const command = commands.find((part) => /^pnpm .*\bbuild$/.test(part));
  if (command === undefined) throw new Error('docker/Dockerfile: no `pnpm … build` command in the build stage');
  return command;
}

/** Every `COPY --from=` line of the Dockerfile (any stage). */
const copiesFromStages = () => dockerfile.flatMap((stage) => instructionsOf(stage, 'COPY')).filter(({ argument }) => argument.startsWith('--from='));
const sourceOf = ({ argument }: Instruction) => argument.split(/\s+/)[1]!;

/** Bounds the image's build stage, run here: two compilations and the live page's bundle. */
const BUILD_TIMEOUT_MS = 5 * 60_000;

/**
 * Runs the Dockerfile's own build command in this checkout, then checks that it made every path
 * the runtime stage copies. It writes dist/, ontologies/ and page-assets/ here, which other test
 * files read: the packaging tests run in a stage of their own, one file at a time (the root
 * package's `test` script).
 */
function buildAsTheImageDoes(): void {
  execFileSync('sh', ['-c', buildCommand()], { cwd: repositoryRoot, stdio: 'pipe', timeout: BUILD_TIMEOUT_MS });
  const missing = copiesFromStages().map(sourceOf).filter((source) => !existsSync(inCheckout(source)));
  if (missing.length > 0) throw new Error(`\`${buildCommand()}\` did not make ${missing.join(', ')}`);
}

/** Fails with what to install, rather than with spawn's ENOENT. */
function requireCommand(command: string, debianPackage: string): void {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'pipe' });
  } catch (error) {
    throw new Error(`${command} is not installed: apt-get install -y ${debianPackage} (.ci/run installs it)`, { cause: error });
  }
}

const runningAsRoot = process.getuid?.() === 0;
/** The unprivileged user the publisher runs as here, standing for the image's `node` (uid 1000). */
const unprivileged = runningAsRoot ? { uid: Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' })) } : undefined;

/**
 * The runtime stage as a folder whose paths are the image's under it: `app/` (owned by root, or
 * read-only when the test does not run as root) and each `VOLUME` (owned by the runtime user, as
 * the image's `chown` makes it). The root node_modules is linked, not copied (hundreds of MB;
 * the publisher only reads it).
 */
function reproduceImage(): { root: string; workdir: string } {
  const root = mkdtempSync(join(tmpdir(), 'rdf-stream-image-'));
  chmodSync(root, 0o755);
  const { copies, workdir } = runtimeCopies();
  for (const { source, destination } of copies) {
    const from = inCheckout(source);
    const to = join(root, destination);
    mkdirSync(dirname(to), { recursive: true, mode: 0o755 });
    if (destination === '/app/node_modules') symlinkSync(from, to);
    else cpSync(from, to, { recursive: true, verbatimSymlinks: true });
  }
  for (const { argument: volume } of instructionsOf(runtime, 'VOLUME')) {
    mkdirSync(join(root, volume), { recursive: true });
    if (unprivileged !== undefined) chownSync(join(root, volume), unprivileged.uid, unprivileged.gid);
  }
  if (unprivileged === undefined) makeReadOnly(join(root, 'app'));
  return { root, workdir: join(root, workdir) };
}

function makeReadOnly(directory: string): void {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    if (entry.isDirectory()) makeReadOnly(join(directory, entry.name));
  }
  chmodSync(directory, statSync(directory).mode & 0o555);
}

interface Started {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; stderr: string }>;
  readonly stdout: () => string;
}

/** Starts the image's ENTRYPOINT (with this test's node) as the runtime user, in the image's WORKDIR. */
function startEntrypoint(workdir: string, environment: Record<string, string>): Started {
  const [program, ...args] = JSON.parse(instructionsOf(runtime, 'ENTRYPOINT').at(-1)!.argument) as string[];
  if (program !== 'node') throw new Error(`ENTRYPOINT runs ${program}: this test expects node`);
  const command =
    unprivileged === undefined
      ? [process.execPath, ...args]
      : ['setpriv', `--reuid=${unprivileged.uid}`, `--regid=${unprivileged.gid}`, '--clear-groups', '--', process.execPath, ...args];
  const child = spawn(command[0]!, command.slice(1), { cwd: workdir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...environment }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stderr })));
  return { child, exited, stdout: () => stdout };
}

/** Resolves once the publisher logs that it publishes; rejects, with its stderr, if it exits first. */
function published(started: Started): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (started.stdout().includes('"msg":"publishing')) resolve();
    };
    started.child.stdout!.on('data', check);
    check();
    void started.exited.then(({ code, stderr }) => reject(new Error(`the publisher exited (${code}) before publishing: ${stderr}`)));
  });
}

/**
 * The id of the first event of an SSE stream (the first element), read as it arrives. Requests
 * here use no keep-alive agent: a connection left idle would hold the publisher's drain at exit.
 */
function firstEventId(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false, headers: { accept: 'text/event-stream' } }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
        const id = /^id: (\S+)$/m.exec(text)?.[1];
        if (id === undefined) return;
        request.destroy();
        resolve(id);
      });
      response.on('end', () => reject(new Error(`the event stream ended before an event: ${text}`)));
    });
    request.on('error', reject);
  });
}

describe('docker/Dockerfile', () => {
  let image: ReturnType<typeof reproduceImage>;
  const imageEnvironment = environmentOf(runtime);

  beforeAll(() => {
    buildAsTheImageDoes();
    if (runningAsRoot) requireCommand('setpriv', 'util-linux');
    image = reproduceImage();
  }, BUILD_TIMEOUT_MS);
  afterAll(() => {
    if (image === undefined) return;
    chmodSync(image.root, 0o755);
    execFileSync('chmod', ['-R', 'u+w', image.root]);
    rmSync(image.root, { recursive: true, force: true });
  });

  it('every COPY --from= source exists after the build (the image still builds)', () => {
    const copies = copiesFromStages();
    expect(copies.length).toBeGreaterThan(5);
    for (const copy of copies) expect(existsSync(inCheckout(sourceOf(copy))), `COPY ${copy.argument}`).toBe(true);
    // What the build stage runs builds what the runtime stage copies from it.
    expect(buildCommand()).toMatch(/--filter @rdf-stream\/protocol --filter @rdf-stream\/publisher --filter @rdf-stream\/dashboard build$/);
  });

  it('the data directory is the volume, owned by the runtime user, and the base is Node 24', () => {
    expect(imageEnvironment.RDF_STREAM_DATA_DIR).toBe('/data');
    expect(instructionsOf(runtime, 'VOLUME').map(({ argument }) => argument)).toEqual(['/data']);
    expect(instructionsOf(runtime, 'RUN').map(({ argument }) => argument)).toContain('mkdir /data && chown node:node /data');
    expect(instructionsOf(runtime, 'USER').map(({ argument }) => argument)).toEqual(['node']);
    expect(readFileSync(join(repositoryRoot, 'docker/Dockerfile'), 'utf8')).toMatch(/^ARG NODE_IMAGE=node:24-bookworm-slim$/m);
  });

  it(
    'runs as an unprivileged user in the root-owned /app: serves an element and writes its log to the volume',
    async () => {
      const port = await freePort();
      const volume = imageEnvironment.RDF_STREAM_DATA_DIR;
      if (volume === undefined) throw new Error('docker/Dockerfile sets no RDF_STREAM_DATA_DIR: the publisher would write under its root-owned WORKDIR');
      const data = join(image.root, volume);
      const started = startEntrypoint(image.workdir, {
        ...imageEnvironment,
        // Loopback only and a free port: the image's 0.0.0.0:8080 is the container's own.
        RDF_STREAM_HOST: '127.0.0.1',
        RDF_STREAM_PORT: String(port),
        // The image's path, under the reproduced root.
        RDF_STREAM_DATA_DIR: data,
      });
      try {
        await published(started);
        // The image runs node with the publisher's options.
        expect(started.stdout()).toContain('"v8MemoryReducer":"off"');
        const base = `http://127.0.0.1:${port}`;
        const id = await firstEventId(`${base}/streams/parking/events`);
        const element = await getOnce(`${base}/streams/parking/elements/${id}`, { accept: 'text/turtle' });
        expect(element.status).toBe(200);
        expect(element.body).toContain('sosa:Observation');
        const streamLog = join(data, 'streams', 'parking');
        expect(readdirSync(streamLog)).toContain('log.json');
        expect(readdirSync(streamLog).some((name) => name.endsWith('.seg'))).toBe(true);
        if (unprivileged !== undefined) expect(statSync(join(streamLog, 'log.json')).uid).toBe(unprivileged.uid);
        expect(existsSync(join(image.workdir, 'data'))).toBe(false);
      } finally {
        started.child.kill('SIGTERM');
      }
      const { code, stderr } = await started.exited;
      expect(code, `${started.stdout().slice(-2_000)}${stderr}`).toBe(0);
    },
    START_TIMEOUT_MS,
  );

  it(
    'without the volume setting it cannot start: the default data directory is under the read-only /app',
    async () => {
      const { RDF_STREAM_DATA_DIR: _volume, ...withoutVolume } = imageEnvironment;
      const started = startEntrypoint(image.workdir, { ...withoutVolume, RDF_STREAM_HOST: '127.0.0.1', RDF_STREAM_PORT: String(await freePort()) });
      const { code, stderr } = await started.exited;
      expect(code).toBe(2);
      expect(stderr).toMatch(/cannot create the data directory .*\/app\/packages\/publisher\/data: EACCES/);
    },
    START_TIMEOUT_MS,
  );
});

describe('the proxies of docker/docker-compose.yml', () => {
  const compose = parseYaml(readFileSync(join(repositoryRoot, 'docker/docker-compose.yml'), 'utf8')) as {
    services: Record<string, { entrypoint?: string[]; volumes?: string[] }>;
    volumes?: Record<string, unknown>;
  };
  const proxyScript = join(repositoryRoot, 'scripts/proxy.sh');
  const render = (proxy: 'nginx' | 'varnish') => execFileSync(proxyScript, ['render', proxy, '--docker'], { encoding: 'utf8' });
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'rdf-stream-proxies-'));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('the publisher keeps its logs in a named volume', () => {
    expect(compose.services.publisher?.volumes).toEqual(['publisher-data:/data']);
    expect(Object.keys(compose.volumes ?? {})).toEqual(['publisher-data']);
  });

  it('docker/nginx/nginx.conf is the template rendered with the compose values (regenerate it when the template changes)', () => {
    expect(readFileSync(join(repositoryRoot, 'docker/nginx/nginx.conf'), 'utf8')).toBe(render('nginx'));
  });

  it('nginx -t accepts the compose rendering (the service name and paths mapped to this machine)', () => {
    const conf = render('nginx')
      .replaceAll('publisher:8080', '127.0.0.1:8080')
      .replaceAll('/var/cache/nginx/rdf-stream', join(scratch, 'nginx'))
      .replaceAll('/var/run/nginx.pid', join(scratch, 'nginx.pid'))
      // A child's standard error is a socket here, which nginx cannot open by name.
      .replaceAll('/dev/stderr', join(scratch, 'nginx-error.log'));
    requireCommand('nginx', 'nginx');
    mkdirSync(join(scratch, 'nginx'));
    writeFileSync(join(scratch, 'nginx.conf'), conf);
    execFileSync('nginx', ['-t', '-q', '-p', scratch, '-c', join(scratch, 'nginx.conf'), '-e', join(scratch, 'nginx-error.log')], { stdio: 'pipe' });
  });

  it('varnishd -C compiles the compose rendering', () => {
    requireCommand('varnishd', 'varnish');
    const vcl = render('varnish').replace('.host = "publisher";', '.host = "127.0.0.1";');
    expect(vcl).toContain('.host = "127.0.0.1";');
    writeFileSync(join(scratch, 'default.vcl'), vcl);
    // Run as root, varnishd's jail would hand the file to its own users, who cannot reach a private temporary folder.
    const jail = runningAsRoot ? ['-j', 'none'] : [];
    execFileSync('varnishd', [...jail, '-C', '-f', join(scratch, 'default.vcl'), '-n', join(scratch, 'varnish')], { stdio: 'pipe' });
  });

  it("the proxies close an idle connection to the publisher before the publisher's keep-alive timeout does", () => {
    const keepAliveSeconds = defaults.keepAliveTimeoutMs / 1000;
    const varnishScript = compose.services.varnish?.entrypoint?.join('\n') ?? '';
    const varnishIdleSeconds = Number(/backend_idle_timeout=(\d+)/.exec(varnishScript)?.[1]);
    const template = readFileSync(join(repositoryRoot, 'docker/nginx/nginx.conf.template'), 'utf8');
    const nginxIdleSeconds = Number(/upstream publisher \{.*?keepalive_timeout (\d+)s;/s.exec(template)?.[1]);
    expect(varnishIdleSeconds).toBeGreaterThan(0);
    expect(nginxIdleSeconds).toBeGreaterThan(0);
    expect(varnishIdleSeconds).toBeLessThan(keepAliveSeconds);
    expect(nginxIdleSeconds).toBeLessThan(keepAliveSeconds);
  });
});
