import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../src/testing.js';
import { PrivateRedis, REDIS_7_0_SERVER } from '../support/private-redis.js';

const packageDir = fileURLToPath(new URL('../..', import.meta.url));

/** The CLI as users run it, its stdout a pipe (not a terminal). */
function cli(args: readonly string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; stdout: () => string; stderr: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: packageDir,
    env: { ...process.env, INIT_CWD: packageDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return { child, stdout: () => stdout, stderr: () => stderr };
}

/** Resolves with stdout once `pattern` appears in it; rejects if the process exits first. */
function waitForOutput(run: ReturnType<typeof cli>, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => pattern.test(run.stdout()) && resolve(run.stdout());
    run.child.stdout!.on('data', check);
    run.child.once('exit', (code) => reject(new Error(`exited ${code}: ${run.stdout()}${run.stderr()}`)));
    check();
  });
}

async function exitOf(run: ReturnType<typeof cli>): Promise<number | string | null> {
  const [code, signal] = (await once(run.child, 'exit')) as [number | null, string | null];
  return code ?? signal;
}

const running: ChildProcess[] = [];
const directories: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-'));
  directories.push(dir);
  return dir;
};
afterEach(async () => {
  await Promise.all(
    running.splice(0).map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }),
  );
  for (const dir of directories.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the publisher CLI', () => {
  it('--port 0: IRIs and links name the port the server actually listens on', async () => {
    const run = cli(['--port', '0', '--log', 'memory', '--interval', '0.2', '--log-format', 'json']);
    const output = await waitForOutput(run, /"msg":"publishing /);
    const { address } = JSON.parse(output.split('\n').find((line) => line.includes('"msg":"publishing '))!) as { address: string };
    const port = new URL(address).port;
    expect(Number(port)).toBeGreaterThan(0);
    const stream = `http://127.0.0.1:${port}/streams/parking`;

    const latest = await fetch(`${stream}/latest`, { headers: { accept: 'application/n-triples' } });
    expect(latest.status).toBe(200);
    expect(latest.headers.get('link')).toBe(`<${stream}>; rel="describedby"`);
    const body = await latest.text();
    expect(body).toContain(`<${stream}/`);
    expect(body).not.toContain(':0/');

    const descriptor = await fetch(stream, { headers: { accept: 'application/n-triples' } });
    expect(descriptor.status).toBe(200);
    expect(descriptor.headers.get('link')).toContain(`<http://127.0.0.1:${port}/notifications>`);
    const described = await descriptor.text();
    expect(described).toContain(`<${stream}>`);
    expect(described).not.toContain(':0/');
  });

  it('--log-format json writes one JSON object a line; pretty writes readable lines', async () => {
    const json = cli(['--port', '0', '--log', 'memory', '--interval', '0.2', '--log-format', 'json']);
    const jsonLines = (await waitForOutput(json, /publishing /)).trim().split('\n');
    for (const line of jsonLines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    // SIGTERM as soon as the start is announced (as a supervisor may send it) drains and exits 0.
    json.child.kill('SIGTERM');
    expect(await exitOf(json)).toBe(0);
    expect(json.stdout()).toMatch(/"msg":"stopped"}\n$/);

    const pretty = cli(['--port', '0', '--log', 'memory', '--interval', '0.2'], { RDF_STREAM_LOG_FORMAT: 'pretty' });
    const prettyLines = (await waitForOutput(pretty, /publishing /)).trim().split('\n');
    expect(prettyLines.find((line) => line.includes('publishing '))).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: publishing parking at http:\/\/127\.0\.0\.1:\d+\/streams$/);
    // Readable lines, each record's fields indented below it: no line is a JSON object.
    expect(prettyLines.filter((line) => line.startsWith('{'))).toEqual([]);
    // Written synchronously: the last line before the process exits is not lost.
    pretty.child.kill('SIGTERM');
    expect(await exitOf(pretty)).toBe(0);
    expect(pretty.stdout()).toMatch(/INFO: stopped\n/);
  });

  it('a replay file that does not exist is a configuration error, found before the data directory is created', async () => {
    const dir = scratch();
    writeFileSync(join(dir, 'publisher.yaml'), 'dataDir: state\nstreams:\n  - id: air\n    title: Air\n    source:\n      kind: replay\n      file: recordings/air.trig\n');
    const run = cli(['--config', join(dir, 'publisher.yaml'), '--port', '0']);
    expect(await exitOf(run)).toBe(2);
    expect(run.stderr()).toContain(`stream "air": its recording ${join(dir, 'recordings/air.trig')} does not exist`);
    expect(run.stderr()).toMatch(/streams\/0\/source\/file \(.*publisher\.yaml line 7\)/);
    expect(existsSync(join(dir, 'state'))).toBe(false);
  });

  it('a recording it cannot use stops the start before the data directory is created (exit 2)', async () => {
    const dir = scratch();
    writeFileSync(join(dir, 'empty.trig'), '');
    writeFileSync(join(dir, 'publisher.yaml'), 'dataDir: state\nstreams:\n  - { id: air, title: Air, source: { kind: replay, file: empty.trig } }\n');
    const run = cli(['--config', join(dir, 'publisher.yaml'), '--port', '0']);
    expect(await exitOf(run)).toBe(2);
    expect(run.stderr()).toMatch(/stream "air": Recording .*empty\.trig holds no SOSA observations/);
    expect(existsSync(join(dir, 'state'))).toBe(false);
  });

  it('--version prints the package version; --help groups the options and lists the choices', async () => {
    const version = cli(['--version']);
    expect(await exitOf(version)).toBe(0);
    const { version: expected } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
    expect(version.stdout().trim()).toBe(expected);

    const help = cli(['--help']);
    expect(await exitOf(help)).toBe(0);
    expect(help.stdout()).toMatch(/\nServer:\n {2}--host/);
    expect(help.stdout()).toMatch(/\nLoad shedding:\n/);
    expect(help.stdout()).toMatch(/--log <value> .*\(choices: "file", "memory", "redis"\)/);
  });

  it('a bad enumeration value names the allowed ones (exit 2)', async () => {
    const run = cli(['--log', 'memori']);
    expect(await exitOf(run)).toBe(2);
    expect(run.stderr()).toContain('log (from --log): "memori" is not one of file, memory');
  });

  it('a shared log server it cannot use stops the start with what to change (exit 2): unreachable, Redis 7.0, its password not printed', async () => {
    const port = await freePort();
    const unreachable = cli(['--log', 'redis', '--redis-url', `redis://:secret-password@127.0.0.1:${port}`, '--port', '0']);
    expect(await exitOf(unreachable)).toBe(2);
    expect(unreachable.stderr()).toContain(`cannot reach the shared log's server at redis://:***@127.0.0.1:${port} (ECONNREFUSED)`);
    expect(unreachable.stderr()).not.toContain('secret-password');
    const old = await PrivateRedis.start({ binary: REDIS_7_0_SERVER });
    try {
      const refused = cli(['--log', 'redis', '--redis-url', old.url, '--port', '0']);
      expect(await exitOf(refused)).toBe(2);
      expect(refused.stderr()).toMatch(/is Redis 7\.0\.\d+; the publisher needs Redis or Valkey 7\.2 or later/);
    } finally {
      await old.close();
    }
  });
});
