import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, openSse } from '../../src/testing.js';

const packageDir = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

function descendants(pid: number): number[] {
  let children: number[];
  try {
    children = execFileSync('pgrep', ['-P', String(pid)]).toString().trim().split('\n').map(Number);
  } catch {
    return []; // pgrep exits 1 when there is none
  }
  return children.flatMap((child) => [child, ...descendants(child)]);
}

/** Processes a failed test would otherwise leave behind (a primary whose workers hold the port). */
const started: number[] = [];
const directories: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'cluster-'));
  directories.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of directories.splice(0)) rmSync(dir, { recursive: true, force: true });
  for (const pid of started.splice(0).flatMap((pid) => [...descendants(pid), pid])) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone: the test stopped it
    }
  }
});

describe('--workers 2 (node:cluster)', () => {
  it('serves the same elements, ids and ETags from every worker, and SIGTERM stops them all', async () => {
    const port = await freePort();
    const { primary, output } = await startCluster(['--port', String(port), '--workers', '2', '--interval', '1', '--data-dir', scratch()]);
    const base = `http://127.0.0.1:${port}/streams/parking`;

    // Round-robin spreads connections over the workers: every one must see the same stream.
    const connections = await Promise.all(Array.from({ length: 6 }, () => openSse(`${base}/events?format=ntriples`)));
    // A connection opened just after an element starts with the next one: compare by id.
    await Promise.all(connections.map((connection) => connection.waitForEvents(3)));
    const dataById = new Map<string, string>();
    for (const connection of connections) {
      for (const event of connection.events.slice(0, 3)) {
        expect(dataById.get(event.id!) ?? event.data, `element ${event.id}`).toBe(event.data);
        dataById.set(event.id!, event.data);
      }
    }
    const idsOf = (index: number) => new Set(connections[index]!.events.slice(0, 3).map((event) => event.id));
    const common = [...idsOf(0)].filter((id) => connections.every((_, index) => idsOf(index).has(id)));
    expect(common.length).toBeGreaterThanOrEqual(2);

    const etags = new Set<string>();
    for (let index = 0; index < 6; index++) {
      const response = await fetch(`${base}/latest`, { headers: { 'accept-encoding': 'identity' } });
      await response.arrayBuffer();
      etags.add(response.headers.get('etag')!.replace(/-\d+-turtle"$/, ''));
    }
    expect(etags.size).toBe(1);

    // Every worker describes the primary's source, not its own relay.
    for (let index = 0; index < 4; index++) {
      const health = (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as { streams: { parking: { source: unknown } } };
      expect(health.streams.parking.source).toMatchObject({ kind: 'simulator', state: 'ok' });
    }

    // tsx → node (the primary) → its workers: three node processes below the one we started
    // (esbuild, which tsx may start as a helper, is not counted).
    const nodes = descendants(primary.pid!).filter((pid) => {
      try {
        // The executable, not /proc/…/comm: Node 24 names its main thread "MainThread".
        return basename(readlinkSync(`/proc/${pid}/exe`)) === 'node';
      } catch {
        return false;
      }
    });
    expect(nodes).toHaveLength(3);

    primary.kill('SIGTERM');
    await Promise.all(connections.map((connection) => connection.ended));
    const [code] = await once(primary, 'exit');
    expect(code, output()).toBe(0);
    expect(output()).toMatch(/"msg":"stopped"/);
  }, 60_000);

  it('--port 0: the primary picks the port, and the writer and every worker name it in IRIs and links', async () => {
    const { primary, output } = await startCluster(['--port', '0', '--workers', '2', '--interval', '0.5', '--log', 'memory', '--log-format', 'json']);
    const port = /publishing parking at http:\/\/127\.0\.0\.1:(\d+)\/streams with 2 workers/.exec(output())?.[1];
    expect(Number(port)).toBeGreaterThan(0);
    const stream = `http://127.0.0.1:${port}/streams/parking`;
    // Several connections, spread over both workers: the element bytes come from the writer,
    // the descriptor and the headers from each worker.
    for (let index = 0; index < 4; index++) {
      const latest = await latestWhenServed(`${stream}/latest`);
      expect(latest.status).toBe(200);
      expect(latest.headers.get('link')).toBe(`<${stream}>; rel="describedby"`);
      expect(await latest.text()).toContain(`<${stream}/elements/`);
      const descriptor = await (await fetch(stream, { headers: { accept: 'text/turtle' } })).text();
      expect(descriptor).toContain(`<${stream}>`);
      expect(descriptor).not.toContain(':0/');
    }
    // Every worker describes the sensors and facilities from the elements it serves: one
    // connection is one worker, asked once its /latest has an element.
    for (let index = 0; index < 4; index++) {
      const client = new Client(`http://127.0.0.1:${port}`);
      try {
        expect(await latestStatusOnConnection(client, '/streams/parking/latest')).toBe(200);
        for (const resource of ['sensors/p01', 'facilities/p01']) {
          const answer = await client.request({ method: 'GET', path: `/streams/parking/${resource}`, headers: { accept: 'text/turtle' } });
          expect(answer.statusCode, resource).toBe(200);
          expect(await answer.body.text()).toContain(`<${stream}/${resource}>`);
        }
      } finally {
        await client.close();
      }
    }
    primary.kill('SIGTERM');
    await once(primary, 'exit');
  }, 60_000);

  it('one worker and two compute the same headers, descriptor and element bytes (a replay with no interval of its own)', async () => {
    // The recording's spacing (10 s) is the interval: both modes must advertise it.
    const dir = scratch();
    const configFile = join(dir, 'replay.yaml');
    const recording = fileURLToPath(new URL('../../../../ontologies/examples/air-quality-recording.trig', import.meta.url));
    writeFileSync(configFile, `streams:\n  - id: air\n    title: Air\n    source:\n      kind: replay\n      file: ${recording}\n      speed: 1\n      loop: true\n`);
    const answers = [];
    for (const workers of ['1', '2']) {
      const port = await freePort();
      const { primary } = await startCluster(['--config', configFile, '--port', String(port), '--workers', workers, '--data-dir', scratch()]);
      const base = `http://127.0.0.1:${port}`;
      const descriptor = await (await fetch(`${base}/streams/air`, { headers: { accept: 'text/turtle' } })).text();
      // Workers learn of the first element a moment after the writer says it publishes: every
      // worker must serve it (an SSE connection to each sees it; /latest then answers 200).
      const latest = await latestWhenServed(`${base}/streams/air/latest`);
      const body = await latest.text();
      const epoch = /elements\/([a-z0-9]+)-1>/.exec(body)?.[1];
      const element = await (await fetch(`${base}/streams/air/elements/${epoch}-1`, { headers: { accept: 'application/n-quads' } })).text();
      // The data WebSocket's URLs name the same host and port with the ws: scheme.
      const normalise = (text: string) =>
        text.replaceAll(base, 'BASE').replaceAll(base.replace(/^http/, 'ws'), 'WS-BASE').replaceAll(`${epoch}-`, 'EPOCH-');
      answers.push({
        descriptor: normalise(descriptor),
        maxAge: Number(/max-age=(\d+)/.exec(latest.headers.get('cache-control') ?? '')?.[1]),
        etag: normalise(latest.headers.get('etag') ?? '').replace(/^"EPOCH-/, '"'),
        // Publication times differ between the two runs (a replay stamps elements when it
        // publishes them); everything else is the same bytes.
        element: normalise(element).replaceAll(/generatedAtTime> "([^"]+)"/.exec(element)?.[1] ?? 'no timestamp', 'TIME'),
      });
      primary.kill('SIGTERM');
      await once(primary, 'exit');
    }
    const [single, cluster] = answers;
    expect(single!.descriptor).toMatch(/temporalResolution "PT10S"/);
    expect(cluster!.descriptor).toBe(single!.descriptor);
    expect(cluster!.etag).toBe(single!.etag);
    expect(cluster!.element).toBe(single!.element);
    // Cacheable until the next element, 10 s after the first: never the 1 s micro-cache.
    for (const answer of answers) expect(answer.maxAge).toBeGreaterThan(1);
  }, 90_000);
});

/** The status of `path` (a `/latest`) on the one connection of `client`, so one worker, once it has an element (503 until then), at most 10 s. */
async function latestStatusOnConnection(client: Client, path: string): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const response = await client.request({ method: 'GET', path, headers: { accept: 'text/turtle' } });
    await response.body.arrayBuffer();
    if (response.statusCode !== 503 || Date.now() > deadline) return response.statusCode;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** `/latest` once the process that answers has an element (503 until then), at most 10 s. */
async function latestWhenServed(url: string): Promise<Response> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const response = await fetch(url, { headers: { accept: 'text/turtle', 'accept-encoding': 'identity' } });
    if (response.status !== 503 || Date.now() > deadline) return response;
    await response.arrayBuffer();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Starts `pnpm start`'s command with `flags` and resolves once it says it is publishing. */
async function startCluster(flags: readonly string[]) {
  const primary = spawn(tsx, ['src/cli.ts', '--log-level', 'info', ...flags], { cwd: packageDir, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(primary.pid!);
  let output = '';
  primary.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  primary.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    primary.stdout.on('data', () => /"msg":"publishing /.test(output) && resolve());
    primary.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
  });
  return { primary, output: () => output };
}
