import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_GZIP_VERIFY_SAMPLE } from '../../src/fleet/gzip-verify-sample.js';
import type { BenchOptions } from '../../src/scenario/bench-options.js';
import { runOne } from '../../src/scenario/run-benchmark.js';
import { DEFAULT_CLIENTS_PER_SOURCE_ADDRESS, DEFAULT_SOURCE_ADDRESSES } from '../../src/scenario/source-addresses.js';

const out = mkdtempSync(join(tmpdir(), 'bench-sources-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const PORT = 18_980;
const CLIENTS = 300;

const options: BenchOptions = {
  modes: ['sse'],
  clientCounts: [CLIENTS],
  durationSeconds: 4,
  rampSeconds: 1,
  intervalSeconds: 1,
  facilities: 13,
  pollIntervalMs: 500,
  pollStrategy: 'fixed',
  sseEncoding: 'identity',
  gzipVerifySample: DEFAULT_GZIP_VERIFY_SAMPLE,
  websocketClient: 'lean',
  httpClient: 'lean',
  proxy: 'none',
  clientProcesses: 2,
  serverWorkers: 1,
  serverInstances: 1,
  log: 'file',
  redisUrl: undefined,
  redisAppendfsync: 'everysec',
  clientsPerSourceAddress: DEFAULT_CLIENTS_PER_SOURCE_ADDRESS,
  sourceAddresses: DEFAULT_SOURCE_ADDRESSES,
  target: undefined,
  outDir: out,
  seed: 1,
  port: PORT,
};

/** The peers of the publisher's established connections on `port`, by address, as the kernel has them (`ss`). */
function peersOfPublisher(port: number): Map<string, number> {
  const lines = execFileSync('ss', ['-tnH', 'state', 'established', `( sport = :${port} )`], { encoding: 'utf8' }).trim().split('\n');
  const peers = new Map<string, number>();
  for (const line of lines.filter(Boolean)) {
    const peer = line.trim().split(/\s+/).at(-1)!.replace(/^\[?(::ffff:)?/, '').replace(/\]?:\d+$/, '');
    peers.set(peer, (peers.get(peer) ?? 0) + 1);
  }
  return peers;
}

describe('the fleet connects from several 127.0.0.x source addresses', () => {
  it(`${CLIENTS} SSE clients reach the publisher from at least two addresses, each with its share`, async () => {
    let seen: Map<string, number> | undefined;
    const run = await runOne(options, 'sse', CLIENTS, (state) => {
      // Once every client is connected: the publisher's side of the connections, read from the kernel.
      if (seen === undefined && state.connected === CLIENTS) seen = peersOfPublisher(PORT);
    });
    expect(run.connected).toBe(CLIENTS);
    expect(run.missedUpdates).toBe(0);
    expect(run.sourceAddresses).toEqual(['127.0.0.1', '127.0.0.2']);
    // The run's monitor connects from 127.0.0.1 too: one more there.
    expect(seen?.get('127.0.0.2')).toBe(CLIENTS / 2);
    expect(seen?.get('127.0.0.1')).toBeGreaterThanOrEqual(CLIENTS / 2);
  }, 120_000);
});
