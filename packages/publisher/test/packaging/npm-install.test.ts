import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * What an outside project gets from npm: each published package packed as `pnpm publish` would
 * pack it (`pnpm pack` runs its prepack build and rewrites `workspace:` ranges), then the three
 * tarballs installed with plain npm into an empty folder, their commands run and their entries
 * imported by plain Node, with nothing of this repository on the way.
 */

const run = promisify(execFile);
const packagesDir = fileURLToPath(new URL('../../../', import.meta.url));
const repositoryDir = fileURLToPath(new URL('../../../../', import.meta.url));
const published = ['protocol', 'client', 'publisher'] as const;
type Published = (typeof published)[number];

/** Packing builds three packages and the live page; npm downloads every dependency on a cold cache. */
const SETUP_TIMEOUT_MS = 15 * 60_000;
/**
 * A bound on one command run from the installed packages, and on each test that runs one: a hang
 * fails instead of stalling the suite, and a loaded machine (type-checking Comunica's declarations,
 * starting Node with the client's imports) still passes.
 */
const COMMAND_TIMEOUT_MS = 180_000;
/** Seconds between two elements of the demo stream: short, so that a few seconds bring several updates. */
const INTERVAL_SECONDS = 0.25;
/** Inter-package ranges must accept the version the workspace packs, and nothing from another major. */
const PROTOCOL_RANGE = /^\^0\.1\.\d+$/;

let workDir: string;
let consumerDir: string;
const tarballs = new Map<Published, string>();
const contents = new Map<Published, string[]>();

async function npm(args: readonly string[], cwd: string) {
  return run('npm', [...args], { cwd, timeout: SETUP_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
}

async function requireRegistry(): Promise<void> {
  const registry = (await npm(['config', 'get', 'registry'], tmpdir())).stdout.trim();
  try {
    await run('npm', ['ping'], { timeout: COMMAND_TIMEOUT_MS });
  } catch (error) {
    throw new Error(
      `npm's registry (${registry}) cannot be reached, and this test installs the packed packages' dependencies from it: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

function packedManifest(name: Published): Record<string, unknown> & { dependencies?: Record<string, string> } {
  const extracted = join(workDir, 'extracted', name);
  return JSON.parse(readFileSync(join(extracted, 'package', 'package.json'), 'utf8')) as ReturnType<typeof packedManifest>;
}

beforeAll(async () => {
  await requireRegistry();
  workDir = mkdtempSync(join(tmpdir(), 'rdf-stream-npm-install-'));
  const packDir = join(workDir, 'packs');
  for (const name of published) {
    // One at a time: the publisher's prepack builds the live page with the other two's sources.
    const { stdout } = await run('pnpm', ['pack', '--pack-destination', packDir], {
      cwd: join(packagesDir, name),
      timeout: SETUP_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
    });
    const tarball = stdout.trim().split('\n').at(-1)!;
    expect(tarball, `pnpm pack of ${name} printed no tarball`).toMatch(/\.tgz$/);
    tarballs.set(name, tarball);
    const extracted = join(workDir, 'extracted', name);
    mkdirSync(extracted, { recursive: true });
    await run('tar', ['-xzf', tarball, '-C', extracted]);
    contents.set(name, (await run('tar', ['-tzf', tarball])).stdout.trim().split('\n'));
  }

  consumerDir = join(workDir, 'outside-project');
  mkdirSync(consumerDir);
  const fromTarballs = Object.fromEntries(published.map((name) => [`@rdf-stream/${name}`, `file:${tarballs.get(name)}`]));
  // `overrides`: the packages' own ranges on each other (^0.1.0) resolve to these tarballs too,
  // never to whatever the registry holds under the same names.
  writeFileSync(
    join(consumerDir, 'package.json'),
    JSON.stringify({ name: 'outside-project', private: true, type: 'module', dependencies: fromTarballs, overrides: fromTarballs }, null, 2),
  );
  // `--prefer-offline`: what npm's cache holds is used without asking the registry whether it is
  // still current (about 27 s of 42 here); what it lacks is downloaded. On a fresh machine (CI)
  // everything is downloaded, so the tarballs are tried against what the registry holds today.
  await npm(['install', '--no-audit', '--no-fund', '--prefer-offline'], consumerDir);
}, SETUP_TIMEOUT_MS);

// The installed tree holds tens of thousands of files: removing them takes a while on a busy disk.
afterAll(async () => {
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
}, SETUP_TIMEOUT_MS);

describe('the packed tarballs', () => {
  it.each(published)('%s holds its compiled JavaScript, declarations, LICENSE and README, and no sources or tests', (name) => {
    const files = contents.get(name)!.map((entry) => entry.replace(/^package\//, ''));
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts']));
    const javascript = files.filter((file) => file.startsWith('dist/') && file.endsWith('.js'));
    for (const file of javascript) expect(files, `${file} has no declarations beside it`).toContain(file.replace(/\.js$/, '.d.ts'));
    // Shipped: JavaScript and declarations. Not shipped: TypeScript sources, source maps (they
    // would point at sources that are not there), tests, scripts, configuration.
    expect(files.filter((file) => /^(src|test|scripts)\//.test(file) || /\.map$|tsconfig/.test(file))).toEqual([]);
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    expect(readFileSync(join(workDir, 'extracted', name, 'package', 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
  });

  it('the publisher holds the live page and the ontologies its code reads at run time', () => {
    const files = contents.get('publisher')!;
    expect(files).toEqual(
      expect.arrayContaining([
        'package/page-assets/index.html',
        'package/ontologies/shapes/stream-element.shacl.ttl',
        'package/ontologies/vocab.ttl',
        'package/ontologies/sosa-profile.ttl',
        'package/bin/rdf-stream-publisher.js',
        'package/dist/cli.js',
        'package/dist/testing.js',
        'package/dist/testing/sse-reader.js',
      ]),
    );
    expect(files.some((file) => /^package\/page-assets\/.+\.js$/.test(file))).toBe(true);
    // The client's browser file, which it serves at /client/rdf-stream-live.js, precompressed.
    expect(files).toEqual(
      expect.arrayContaining(['package/page-assets/client/rdf-stream-live.js', 'package/page-assets/client/rdf-stream-live.js.br', 'package/page-assets/client/rdf-stream-live.js.gz']),
    );
  });

  it('the client holds its browser file, with declarations, as @rdf-stream/client/browser and the CDN entry', () => {
    const files = contents.get('client')!;
    expect(files).toEqual(expect.arrayContaining(['package/dist/browser/rdf-stream-live.js', 'package/dist/browser/rdf-stream-live.d.ts']));
    const manifest = packedManifest('client');
    expect((manifest.exports as Record<string, unknown>)['./browser']).toEqual({
      types: './dist/browser/rdf-stream-live.d.ts',
      default: './dist/browser/rdf-stream-live.js',
    });
    expect([manifest.unpkg, manifest.jsdelivr]).toEqual(['dist/browser/rdf-stream-live.js', 'dist/browser/rdf-stream-live.js']);
    const text = readFileSync(join(workDir, 'extracted', 'client', 'package', 'dist', 'browser', 'rdf-stream-live.js'), 'utf8');
    expect(text).not.toMatch(/(?:^|[;}])import\s*(?:[{*\w$][^;]*?from\s*)?["']/);
  });

  it.each(published)('%s has a public manifest: not private, exports dist/, no workspace ranges', (name) => {
    const manifest = packedManifest(name);
    expect(manifest.private).toBeUndefined();
    expect(manifest.license).toBe('MIT');
    expect(manifest.repository).toMatchObject({ type: 'git', directory: `packages/${name}` });
    expect(JSON.stringify(manifest.exports)).not.toMatch(/src\//);
    expect(JSON.stringify(manifest)).not.toMatch(/workspace:/);
    expect(manifest.dependencies?.tsx).toBeUndefined();
    if (name !== 'protocol') expect(manifest.dependencies?.['@rdf-stream/protocol']).toMatch(PROTOCOL_RANGE);
  });
});

describe('installed with npm into an outside project', () => {
  it('holds one copy of each package, from the tarballs', async () => {
    const { stdout } = await npm(['ls', '--all', '--json'], consumerDir);
    const tree = JSON.stringify(JSON.parse(stdout));
    const lock = JSON.parse(readFileSync(join(consumerDir, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string }> };
    for (const name of published) {
      const copies = Object.keys(lock.packages).filter((path) => path.endsWith(`node_modules/@rdf-stream/${name}`));
      expect(copies, `copies of @rdf-stream/${name}`).toEqual([`node_modules/@rdf-stream/${name}`]);
      expect(lock.packages[`node_modules/@rdf-stream/${name}`]!.resolved).toMatch(/^file:.+\.tgz$/);
    }
    expect(tree).not.toMatch(/"invalid"|"missing"/);
    // The publisher's SPARQL endpoint brings the query engine (one copy, which the client's
    // optional peer dependency then finds); the client alone goes without it (below).
    expect(Object.keys(lock.packages).filter((path) => path.endsWith('node_modules/@comunica/query-sparql-rdfjs'))).toEqual([
      'node_modules/@comunica/query-sparql-rdfjs',
    ]);
  }, COMMAND_TIMEOUT_MS);

  it('imports every entry with plain Node', async () => {
    const script = join(consumerDir, 'entries.mjs');
    writeFileSync(
      script,
      [
        "import * as protocol from '@rdf-stream/protocol';",
        "import * as client from '@rdf-stream/client';",
        "import * as live from '@rdf-stream/client/live';",
        "import * as browser from '@rdf-stream/client/browser';",
        "import * as publisher from '@rdf-stream/publisher';",
        "import * as testing from '@rdf-stream/publisher/testing';",
        'console.log(JSON.stringify([protocol.mediaTypes.turtle, typeof client.subscribe, typeof live.subscribe, typeof browser.subscribe, typeof publisher.createPublisher, typeof testing.startTestPublisher]));',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, [script], { cwd: consumerDir, timeout: COMMAND_TIMEOUT_MS });
    expect(JSON.parse(stdout)).toEqual(['text/turtle', 'function', 'function', 'function', 'function', 'function']);
  }, COMMAND_TIMEOUT_MS);

  it("bundles the installed client for browsers with the browser's WebSocket, without the ws package", async () => {
    const result = await build({
      stdin: { contents: "export { subscribe } from '@rdf-stream/client/live';", resolveDir: consumerDir, loader: 'js' },
      // Paths in the metafile are relative to it.
      absWorkingDir: consumerDir,
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).toContain('node_modules/@rdf-stream/client/dist/transport/open-web-socket.browser.js');
    expect(inputs.filter((input) => /node_modules\/ws\/|open-web-socket\.js$/.test(input))).toEqual([]);
  }, COMMAND_TIMEOUT_MS);

  it('type-checks against the shipped declarations (strict, NodeNext, library files checked)', async () => {
    writeFileSync(
      join(consumerDir, 'consumer.ts'),
      [
        "import { type FormatName, mediaTypes } from '@rdf-stream/protocol';",
        "import { LatencyRecorder, type StreamUpdate, subscribe } from '@rdf-stream/client';",
        "import { subscribe as subscribeLive } from '@rdf-stream/client/live';",
        "import { subscribe as subscribeBrowser } from '@rdf-stream/client/browser';",
        "import { createPublisher, elementQuads, loadConfig, ManualSource, type PublisherConfig } from '@rdf-stream/publisher';",
        "import { manualClock, openSse, startTestPublisher, type TestPublisher } from '@rdf-stream/publisher/testing';",
        "const format: FormatName = 'turtle';",
        "const started: Promise<TestPublisher> = startTestPublisher({ flags: ['--page-elements', '3'], source: 'simulator', clock: manualClock().clock });",
        "const config: PublisherConfig = loadConfig({ argv: ['--port', '0'] });",
        'const describe = (update: StreamUpdate): string => `${update.seq ?? 0}: ${update.quads.length} quads`;',
        'console.log(mediaTypes[format], config.port, describe, subscribe, subscribeLive, subscribeBrowser, new LatencyRecorder(), createPublisher, elementQuads, ManualSource, started, openSse);',
      ].join('\n'),
    );
    writeFileSync(
      join(consumerDir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
          // The repository's @types/node: the outside project installs no types of its own.
          typeRoots: [join(repositoryDir, 'node_modules', '@types')],
        },
        files: ['consumer.ts'],
      }),
    );
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const diagnostics = await run(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], { cwd: consumerDir, timeout: COMMAND_TIMEOUT_MS })
      .then(() => '')
      .catch((error: { stdout?: string }) => error.stdout ?? String(error));
    // Ours only: third-party declarations deep in the tree have errors of their own under
    // skipLibCheck: false (lru-cache's, under Comunica's rdf-parse, against this TypeScript's lib).
    const ours = diagnostics.split('\n').filter((line) => /^(consumer\.ts|node_modules\/@rdf-stream\/)/.test(line));
    expect(ours).toEqual([]);
    expect(diagnostics, 'tsc failed before reporting any file').not.toMatch(/^error TS/m);
  }, COMMAND_TIMEOUT_MS);

  it("the publisher README's testing example runs on plain Node against the installed package", async () => {
    const readme = readFileSync(join(packagesDir, 'publisher', 'README.md'), 'utf8');
    const example = /## Test against a real publisher[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example, 'no example under "Test against a real publisher"').toBeDefined();
    const script = join(consumerDir, 'testing-example.mjs');
    writeFileSync(script, example!);
    // No kill: the command's promise settles only once the process has exited on its own.
    const { stdout } = await run(process.execPath, [script], { cwd: consumerDir, timeout: COMMAND_TIMEOUT_MS });
    expect(stdout.trim()).toMatch(/^element 1 arrived as event [a-z0-9]+-1$/);
  }, COMMAND_TIMEOUT_MS);

  describe('with the installed publisher running', () => {
    let streamUrl: string;
    let publisher: ChildProcess;
    let publisherOutput = '';

    beforeAll(async () => {
      publisher = spawn(
        join(consumerDir, 'node_modules', '.bin', 'rdf-stream-publisher'),
        [
          // Port 0: the publisher names the port it bound in its IRIs and in its first log line.
          ...['--port', '0', '--log', 'memory', '--interval', String(INTERVAL_SECONDS), '--log-format', 'json'],
          // No load shedding: on a busy machine the event loop's delay alone would turn this
          // test's few subscribers away with 503s, and installing is what is tested here.
          ...['--max-event-loop-turn-ms', '0', '--max-event-loop-delay-ms', '0'],
        ],
        { cwd: consumerDir, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      publisher.stdout!.setEncoding('utf8');
      publisher.stderr!.setEncoding('utf8').on('data', (chunk: string) => (publisherOutput += chunk));
      streamUrl = await new Promise<string>((resolve, reject) => {
        publisher.stdout!.on('data', (chunk: string) => {
          publisherOutput += chunk;
          const base = /publishing parking at (http:\/\/127\.0\.0\.1:\d+)\/streams/.exec(publisherOutput)?.[1];
          if (base !== undefined) resolve(`${base}/streams/parking`);
        });
        publisher.once('exit', (code) => reject(new Error(`the installed publisher exited with ${code}: ${publisherOutput}`)));
      });
    }, COMMAND_TIMEOUT_MS);

    afterAll(async () => {
      if (publisher === undefined || publisher.exitCode !== null || publisher.signalCode !== null) return;
      const exited = once(publisher, 'exit');
      publisher.kill('SIGTERM');
      await exited;
    });

    it("runs with the publisher's node options where node can start again with them, and says whether it does", () => {
      // The installed command starts node again with --no-memory-reducer (process.execve, Node ≥ 22.15).
      const restarts = typeof (process as { execve?: unknown }).execve === 'function';
      expect(publisherOutput).toContain(restarts ? '"v8MemoryReducer":"off"' : '"v8MemoryReducer":"on (node was started without --no-memory-reducer)"');
      // In the same process: the pid it was started as is the publisher's, and its command line has the option.
      const commandLine = readFileSync(`/proc/${publisher.pid}/cmdline`, 'utf8').split('\0');
      expect(commandLine.includes('--no-memory-reducer')).toBe(restarts);
    });

    it('reads kernel send queues socket by socket: npm installed the optional koffi, and it loads', () => {
      expect(publisherOutput).toMatch(/"sendQueues":"ioctl\(SIOCOUTQ\) per socket"/);
    });

    it('serves the latest element and the live page from the installed package, with IRIs on the port it bound', async () => {
      expect(streamUrl).not.toMatch(/:0\//);
      const latest = await fetch(`${streamUrl}/latest`);
      expect(latest.status).toBe(200);
      expect(latest.headers.get('content-type')).toMatch(/^text\/turtle/);
      const turtle = await latest.text();
      expect(turtle).toMatch(/sosa:Observation|ns\/sosa\/Observation/);
      expect(turtle).toContain(`<${streamUrl}/elements/`);

      const page = await fetch(streamUrl, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      const html = await page.text();
      const script = /src="(\/page\/[^"]+\.js)"/.exec(html)?.[1];
      expect(script, `no script in the live page: ${html}`).toBeDefined();
      expect((await fetch(new URL(script!, streamUrl))).status).toBe(200);
    });

    it("serves the installed client's own browser file at /client/rdf-stream-live.js", async () => {
      const response = await fetch(new URL('/client/rdf-stream-live.js', streamUrl), { headers: { 'accept-encoding': 'identity' } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      const shipped = readFileSync(join(consumerDir, 'node_modules', '@rdf-stream', 'client', 'dist', 'browser', 'rdf-stream-live.js'));
      expect(Buffer.compare(Buffer.from(await response.arrayBuffer()), shipped)).toBe(0);
    });

    it("the client's command prints the updates it receives, and stops after --count", async () => {
      const { stdout } = await run(join(consumerDir, 'node_modules', '.bin', 'rdf-stream'), ['subscribe', streamUrl, '--transport', 'sse', '--count', '2'], {
        cwd: consumerDir,
        timeout: COMMAND_TIMEOUT_MS,
      });
      const updates = stdout.split('\n').filter((line) => /^seq=\d+\tlatency=[\d.]+ ms\ttriples=\d+\tsse$/.test(line));
      expect(updates, stdout).toHaveLength(2);
      expect(stdout).toMatch(/2 updates over sse; latency ms p50=/);
    }, COMMAND_TIMEOUT_MS);

    it.each(['sse', 'websocket', 'poll', 'long-poll'])('a plain ESM script reads two updates over %s, leaves the loop, and its process exits by itself', async (transport) => {
      const script = join(consumerDir, `two-updates-${transport}.mjs`);
      writeFileSync(
        script,
        [
          "import { subscribe } from '@rdf-stream/client';",
          'let received = 0;',
          `for await (const event of subscribe(${JSON.stringify(streamUrl)}, { transport: ${JSON.stringify(transport)} })) {`,
          "  if (event.type !== 'update') continue;",
          "  console.log(`update ${event.seq} ${event.quads.length} quads ${event.transport}`);",
          '  if (++received === 2) break;',
          '}',
        ].join('\n'),
      );
      // No kill: the command's promise settles only once the process has exited on its own.
      const { stdout } = await run(process.execPath, [script], { cwd: consumerDir, timeout: COMMAND_TIMEOUT_MS });
      const lines = stdout.trim().split('\n');
      expect(lines).toHaveLength(2);
      for (const line of lines) expect(line).toMatch(new RegExp(`^update \\d+ \\d+ quads ${transport}$`));
      const [first, second] = lines.map((line) => Number(line.split(' ')[1]));
      expect(second).toBeGreaterThan(first!);
    }, COMMAND_TIMEOUT_MS);

    it("the repository's examples/node-subscribe.mjs runs on plain Node against the installed client", async () => {
      const script = join(consumerDir, 'node-subscribe.mjs');
      copyFileSync(join(repositoryDir, 'examples', 'node-subscribe.mjs'), script);
      const { stdout } = await run(process.execPath, [script, streamUrl, '--updates', '2'], { cwd: consumerDir, timeout: COMMAND_TIMEOUT_MS });
      expect(stdout.split('\n').filter((line) => line.startsWith('update '))).toHaveLength(2);
      expect(stdout).toMatch(/^ {2}\S+ on \S+: \S+ = \d+ at \S+$/m);
      expect(stdout).toMatch(/^2 updates; latency p50 [\d.]+ ms/m);
    }, COMMAND_TIMEOUT_MS);

    describe('continuous queries, whose engine is an optional peer dependency', () => {
      it('without it (the client installed alone), `rdf-stream query` says which package to install, and exits 2', async () => {
        // The publisher depends on the engine for its SPARQL endpoint: a project with the client
        // and the protocol only is one without the engine.
        const clientOnlyDir = join(workDir, 'client-only-project');
        mkdirSync(clientOnlyDir);
        const clientTarballs = Object.fromEntries((['protocol', 'client'] as const).map((name) => [`@rdf-stream/${name}`, `file:${tarballs.get(name)}`]));
        writeFileSync(
          join(clientOnlyDir, 'package.json'),
          JSON.stringify({ name: 'client-only-project', private: true, type: 'module', dependencies: clientTarballs, overrides: clientTarballs }, null, 2),
        );
        await npm(['install', '--no-audit', '--no-fund', '--prefer-offline'], clientOnlyDir);
        const lock = JSON.parse(readFileSync(join(clientOnlyDir, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
        expect(Object.keys(lock.packages).filter((path) => path.includes('@comunica/'))).toEqual([]);
        const query = join(repositoryDir, 'packages', 'client', 'examples', 'average-free-spaces.rq');
        const failure = await run(join(clientOnlyDir, 'node_modules', '.bin', 'rdf-stream'), ['query', '--query', query, '--count', '1'], {
          cwd: clientOnlyDir,
          timeout: COMMAND_TIMEOUT_MS,
        }).then(
          () => undefined,
          (error: { code?: number; stderr?: string }) => error,
        );
        expect(failure?.code).toBe(2);
        expect(failure?.stderr).toMatch(/npm install @comunica\/query-sparql-rdfjs@\^5\.4\.1/);
      }, SETUP_TIMEOUT_MS);

      it("with it installed next to the client, the repository's examples/query.mjs prints a result", async () => {
        await npm(['install', '--no-audit', '--no-fund', '--prefer-offline', '@comunica/query-sparql-rdfjs@^5.4.1'], consumerDir);
        const script = join(consumerDir, 'query.mjs');
        copyFileSync(join(repositoryDir, 'examples', 'query.mjs'), script);
        const { stdout } = await run(process.execPath, [script, streamUrl, '--window', 'ELEMENTS 2', '--results', '1'], {
          cwd: consumerDir,
          timeout: COMMAND_TIMEOUT_MS,
        });
        expect(stdout).toMatch(/^result 1 over \d+ elements: latency \d+ ms/m);
        expect(stdout).toMatch(/^ {2}p\d+: average [\d.]+ free spaces over \d+ observations$/m);
      }, SETUP_TIMEOUT_MS);
    });
  });
});
