import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Value } from '@sinclair/typebox/value';
import { afterAll, describe, expect, it } from 'vitest';
import { SummarySchema } from '../../src/report/summary-schema.js';

const run = promisify(execFile);
const out = mkdtempSync(join(tmpdir(), 'bench-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

// Each refusal is a process of its own that starts nothing: they run side by side.
describe.concurrent('pnpm bench refuses what cannot run, saying why', () => {
  const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
  it.each([
    [['--mode', 'sse', '--clients', '25000'], /25000 clients need more than 19000 connections per publisher process \(at most 20 000 open files per process\): use --server-workers 2 or more/],
    [['--mode', 'sse', '--clients', '40000', '--server-workers', '2'], /use --server-workers 3 or more/],
    [['--mode', 'sse', '--clients', '100', '--server-instances', '2'], /several --server-instances serve one stream only through a shared log: add --log redis/],
    [['--mode', 'poll', '--clients', '100', '--server-instances', '2', '--log', 'redis', '--proxy', 'nginx'], /--proxy fronts one publisher/],
    [['--mode', 'sse', '--clients', '100', '--source-addresses', '300'], /--source-addresses is at most 254/],
    // More clients than one address has ports: refused before anything starts.
    [['--mode', 'sse', '--clients', '30000', '--server-workers', '2', '--source-addresses', '1'], /30000 client connections need 30000 free ephemeral ports, but 127\.0\.0\.1 has \d+ free .*--source-addresses 2/],
  ])('%j', async (args, message) => {
    const failure = await run(process.execPath, ['--import', 'tsx', cli, ...args], { cwd: fileURLToPath(new URL('../..', import.meta.url)) }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toMatch(message);
  });
});

describe('pnpm bench (smoke run: a few seconds, 200 clients per mode, every mode)', () => {
  it('runs every mode, writes a summary.json that matches its schema and latencies.csv, and misses no update', async () => {
    const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', cli, '--mode', 'all', '--clients', '200', '--duration', '4', '--ramp', '1', '--interval', '1', '--port', '18950', '--throughput-duration', '2', '--throughput-connections', '50', '--out', out],
      { cwd: fileURLToPath(new URL('../..', import.meta.url)), timeout: 180_000 },
    );
    expect(stdout).toMatch(/mode\s+clients\s+connected/);
    const summary: unknown = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect([...Value.Errors(SummarySchema, summary)].map((error) => `${error.path}: ${error.message}`)).toEqual([]);
    const { runs } = summary as {
      runs: Array<{
        mode: string;
        connected: number;
        updatesExpected: number;
        updatesReceived: number;
        missedUpdates: number;
        errors: number;
        serverCpuMilli: unknown;
        serverCpuMicrosPerUpdate: number | null;
        fleetCpuSeconds: number;
        stealPercent: number | null;
        listenOverflows: number | null;
        perElement: Array<{ received: number; warmup: boolean }>;
        wireBytesPerUpdate: number | null;
        elementBytes: { identity: number; sseEvent: number; websocketFrame: number | null };
        loadAverage: number[];
        memory: {
          connection: string;
          baseline: { connected: number; serverRssMiB: number; tcpSockets: number | null };
          idle: { connected: number; serverRssMiB: number; tcpSockets: number | null } | null;
          perConnection: { idle: { serverRssKiB: number; tcpKernelKiBPerSide: number | null } | null };
        } | null;
      }>;
    };
    expect(runs.map((r) => r.mode)).toEqual(['poll', 'sse', 'long-poll', 'websocket']);
    // Memory per connection: the publisher with no client, then with every client connected, between two elements.
    expect(runs.map((r) => r.memory?.connection)).toEqual(['polling connection (keep-alive)', 'SSE subscriber', 'long-poll waiter', 'WebSocket']);
    for (const r of runs.filter((run) => run.mode !== 'poll')) {
      expect(r.memory!.baseline.connected).toBe(0);
      expect(r.memory!.idle?.connected).toBe(200);
      expect(r.memory!.idle!.serverRssMiB).toBeGreaterThan(0);
      // The 200 connections are sockets at both ends, among whatever else the machine has open (the
      // count is machine-wide: other work may close more meanwhile, so no difference is asserted).
      expect(r.memory!.idle!.tcpSockets).toBeGreaterThanOrEqual(400);
      expect(r.memory!.perConnection.idle?.tcpKernelKiBPerSide).not.toBeNull();
      expect(r.loadAverage).toHaveLength(3);
    }
    const { memoryPerConnection } = summary as { memoryPerConnection: Array<{ connection: string; idle: unknown }> };
    expect(memoryPerConnection.map((row) => row.connection)).toEqual(['polling connection (keep-alive)', 'SSE subscriber', 'long-poll waiter', 'WebSocket']);
    for (const r of runs) {
      expect(r.connected).toBe(200);
      expect(r.updatesExpected).toBeGreaterThan(0);
      expect(r.missedUpdates).toBe(0);
      expect(r.errors).toBe(0);
      expect(r.serverCpuMilli).not.toBeNull();
      expect(r.serverCpuMicrosPerUpdate).toBeGreaterThan(0);
      expect(r.fleetCpuSeconds).toBeGreaterThan(0);
      expect(r.stealPercent).not.toBeNull();
      expect(r.listenOverflows).not.toBeNull();
      // Every update received is in the per-element table, warm-up or measured.
      expect(r.perElement.length).toBeGreaterThan(0);
      expect(r.perElement.reduce((sum, row) => sum + row.received, 0)).toBeGreaterThanOrEqual(r.updatesReceived);
      // An update on the wire is at least the document, with its headers or framing.
      expect(r.wireBytesPerUpdate).toBeGreaterThan(r.elementBytes.identity);
    }
    // A WebSocket frame: the document, an `element {id}` line and a 4-byte header; less than the SSE event's `data: ` prefixes.
    const websocket = runs.find((r) => r.mode === 'websocket')!;
    expect(websocket.elementBytes.websocketFrame).toBeGreaterThan(websocket.elementBytes.identity);
    expect(websocket.elementBytes.websocketFrame).toBeLessThan(websocket.elementBytes.sseEvent);
    const { throughput, mal } = summary as { throughput: { requestsPerSecond: number }; mal: { table: unknown[] } };
    expect(throughput.requestsPerSecond).toBeGreaterThan(0);
    expect(mal.table).toHaveLength(6);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('<svg');
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/);
    expect(readFileSync(join(out, 'server-cpu.png')).subarray(1, 4).toString()).toBe('PNG');
    expect(readFileSync(join(out, 'per-element.png')).subarray(1, 4).toString()).toBe('PNG');
    expect(readFileSync(join(out, 'capacity-plan.png')).subarray(1, 4).toString()).toBe('PNG');
    expect(readFileSync(join(out, 'memory-per-connection.png')).subarray(1, 4).toString()).toBe('PNG');
    expect(html).toContain('<h2>Capacity plan</h2>');
    expect(html).toContain('<h2>Memory per connection</h2>');
    expect(stdout).toMatch(/Memory per connection:\n/);
    // Every figure of the plan measured in this run: CPU per update, requests/s, bytes.
    const { capacityPlan } = summary as { capacityPlan: { rows: Array<{ cores: number | null; gbitPerSecond: number | null }> } };
    expect(capacityPlan.rows.filter((row) => row.cores === null || row.gbitPerSecond === null)).toEqual([]);
    expect(stdout).toMatch(/Capacity plan/);
    expect(stdout).toMatch(/Beside the wind-sensor study/);
    expect(html).toContain('<h2>Beside the wind-sensor study</h2>');
    expect(html).toContain('<h2>Per element</h2>');
    const csv = readFileSync(join(out, 'latencies.csv'), 'utf8').trim().split('\n');
    expect(csv[0]).toBe('mode,clients,seq,latencyMs');
    expect(csv.length).toBeGreaterThan(1);
  }, 200_000);

  it('SSE clients that accept gzip get the stream compressed and miss nothing', async () => {
    const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
    const gzipOut = join(out, 'gzip');
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', cli, '--mode', 'sse', '--sse-encoding', 'gzip', '--clients', '100', '--duration', '4', '--ramp', '1', '--interval', '1', '--port', '18955', '--throughput-duration', '0', '--out', gzipOut],
      { cwd: fileURLToPath(new URL('../..', import.meta.url)), timeout: 120_000 },
    );
    expect(stdout).toMatch(/sse \(gzip\)/);
    const summary = JSON.parse(readFileSync(join(gzipOut, 'summary.json'), 'utf8')) as {
      runs: Array<{
        sseEncoding: string;
        connected: number;
        updatesExpected: number;
        missedUpdates: number;
        errors: number;
        elementBytes: { sseEvent: number; sseEventGzip: number | null };
        gzipReading: { verifyClients: number; verified: number; mismatches: number; pieces: number; piecesInflated: number; compressedBytes: number };
      }>;
      capacityPlan: { rows: Array<{ transport: string; cores: number | null; coresNote: string | null }> };
    };
    expect([...Value.Errors(SummarySchema, summary)].map((error) => `${error.path}: ${error.message}`)).toEqual([]);
    const [sse] = summary.runs;
    expect(sse).toMatchObject({ sseEncoding: 'gzip', connected: 100, missedUpdates: 0, errors: 0 });
    expect(sse!.updatesExpected).toBeGreaterThan(0);
    // An event on the compressed stream, read off the wire: a fraction of the plain one.
    expect(sse!.elementBytes.sseEventGzip).toBeGreaterThan(0);
    expect(sse!.elementBytes.sseEventGzip).toBeLessThan(sse!.elementBytes.sseEvent / 3);
    // One client of the 100 (1 %, rounded up) inflated its whole stream, and every event it got read the same without inflating.
    expect(sse!.gzipReading).toMatchObject({ verifyClients: 1, mismatches: 0 });
    expect(sse!.gzipReading.verified).toBeGreaterThan(0);
    // Each distinct piece was inflated once per worker, not once per client.
    expect(sse!.gzipReading.piecesInflated).toBeLessThan(sse!.gzipReading.pieces / 10);
    expect(stdout).toMatch(/1 sample clients inflated their whole stream; \d+ events of theirs matched the cheap reading, 0 did not/);
    // The plan has gzip's own cost, and says identity's needs another invocation.
    const identityRow = summary.capacityPlan.rows.find((row) => row.transport === 'sse')!;
    expect(identityRow).toMatchObject({ cores: null, coresNote: 'add a --mode sse run (identity, another invocation)' });
    expect(summary.capacityPlan.rows.find((row) => row.transport === 'sse-gzip')).toMatchObject({ coresNote: null });
  }, 120_000);

  it('WebSocket clients of the ws library at 4 Hz (--interval 0.25) get every element', async () => {
    const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
    const wsOut = join(out, 'ws');
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', cli, '--mode', 'websocket', '--websocket-client', 'ws', '--clients', '100', '--duration', '4', '--ramp', '1', '--interval', '0.25', '--port', '18945', '--throughput-duration', '0', '--out', wsOut],
      { cwd: fileURLToPath(new URL('../..', import.meta.url)), timeout: 120_000 },
    );
    expect(stdout).toMatch(/websocket \(ws client\)/);
    const summary = JSON.parse(readFileSync(join(wsOut, 'summary.json'), 'utf8')) as {
      runs: Array<{ websocketClient: string; connected: number; updatesPublished: number; updatesExpected: number; missedUpdates: number; errors: number }>;
    };
    expect([...Value.Errors(SummarySchema, summary)].map((error) => `${error.path}: ${error.message}`)).toEqual([]);
    const [websocket] = summary.runs;
    expect(websocket).toMatchObject({ websocketClient: 'ws', connected: 100, missedUpdates: 0, errors: 0 });
    // Four elements a second over the 4 s measured; each client owes those of the first 2 s (the last 2 s are grace).
    expect(websocket!.updatesPublished).toBeGreaterThanOrEqual(14);
    expect(websocket!.updatesExpected).toBeGreaterThanOrEqual(100 * 6);
  }, 120_000);
});

describe('pnpm bench when a client worker dies', () => {
  it('fails the run, saying so, and leaves no publisher behind (it does not wait for the report for ever)', async () => {
    const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
    // A poll trace it cannot write (a directory under a file) ends each worker as it stops.
    const failure = await run(
      process.execPath,
      ['--import', 'tsx', cli, '--mode', 'poll', '--clients', '100', '--duration', '2', '--ramp', '1', '--interval', '1', '--port', '18940', '--throughput-duration', '0', '--out', join(out, 'dies')],
      { cwd: fileURLToPath(new URL('../..', import.meta.url)), timeout: 90_000, env: { ...process.env, RDF_STREAM_BENCH_POLL_TRACE: '/dev/null/trace' } },
    ).then(
      () => undefined,
      (error: { code: number | null; killed: boolean; stderr: string }) => error,
    );
    expect(failure).toMatchObject({ code: 1, killed: false });
    expect(failure?.stderr).toMatch(/a client worker exited with 1 before it reported/);
    // Its publisher was stopped on the way out: the port is free again.
    const response = await fetch('http://127.0.0.1:18940/streams/parking/latest').catch((error: Error) => error);
    expect(response).toBeInstanceOf(Error);
  }, 120_000);
});
