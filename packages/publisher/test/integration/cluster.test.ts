import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../support/publisher-fixture.js';
import { openSse } from '../support/sse-client.js';

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
afterEach(() => {
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
    const primary = spawn(tsx, ['src/cli.ts', '--port', String(port), '--workers', '2', '--interval', '1', '--log-level', 'warn'], {
      cwd: packageDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(primary.pid!);
    let output = '';
    primary.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    await new Promise<void>((resolve, reject) => {
      primary.stdout.on('data', () => output.includes('with 2 workers') && resolve());
      primary.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
    });
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
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'node';
      } catch {
        return false;
      }
    });
    expect(nodes).toHaveLength(3);

    primary.kill('SIGTERM');
    await Promise.all(connections.map((connection) => connection.ended));
    const [code] = await once(primary, 'exit');
    expect(code).toBe(0);
    expect(output).toMatch(/"msg":"stopped"/);
  }, 30_000);
});
