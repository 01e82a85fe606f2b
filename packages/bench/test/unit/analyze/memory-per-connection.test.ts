import { describe, expect, it } from 'vitest';
import { connectionKind, connectionMemoryRows, memoryPerConnection, memorySlope, peakSnapshot } from '../../../src/analyze/memory-per-connection.js';
import type { MemorySnapshot } from '../../../src/collect/memory-snapshot.js';

const MiB = 1_048_576;
const snapshot = (connected: number, rssMiB: number, tcpInUse: number | null, tcpMemKiB: number | null, atMs = 0): MemorySnapshot => ({
  atMs,
  connected,
  serverRssBytes: rssMiB * MiB,
  tcpInUse,
  tcpMemBytes: tcpMemKiB === null ? null : tcpMemKiB * 1024,
});

describe('memoryPerConnection', () => {
  it('divides what N connections added to the baseline by N; the TCP buffers of both ends, and half of them per side', () => {
    // 10 000 clients: RSS 120 → 280 MiB, 20 000 more sockets (both ends), 2 000 KiB more buffers.
    expect(memoryPerConnection(snapshot(0, 120, 14, 0), snapshot(10_000, 280, 20_014, 2_000))).toEqual({
      serverRssKiB: 16.38,
      tcpKernelKiBBothEnds: 0.2,
      tcpKernelKiBPerSide: 0.1,
      tcpSocketsPerConnection: 2,
    });
  });

  it('has no figure without connections, and no TCP figure off Linux', () => {
    expect(memoryPerConnection(snapshot(0, 120, 14, 0), snapshot(0, 130, 14, 0))).toBeNull();
    expect(memoryPerConnection(snapshot(0, 100, null, null), snapshot(1_000, 110, null, null))).toEqual({
      serverRssKiB: 10.24,
      tcpKernelKiBBothEnds: null,
      tcpKernelKiBPerSide: null,
      tcpSocketsPerConnection: null,
    });
  });
});

describe('memorySlope', () => {
  it('is what one more connection costs across runs of several sizes, whatever every run holds regardless of its size', () => {
    // 150 MiB whatever the size, plus 20 KiB per connection: the slope finds the 20 KiB that (with − baseline) ÷ N overstates.
    const runs = [2_000, 10_000].map((n) => snapshot(n, 150 + (n * 20) / 1024, 10 + 2 * n, n * 0.5));
    expect(memorySlope(runs)).toEqual({ serverRssKiB: 20, tcpKernelKiBBothEnds: 0.5, tcpKernelKiBPerSide: 0.25, tcpSocketsPerConnection: 2 });
  });

  it('fits a line through more than two sizes (least squares)', () => {
    const runs = [snapshot(1_000, 100, null, null), snapshot(2_000, 110, null, null), snapshot(3_000, 114, null, null)];
    // Slope of (1000, 100), (2000, 110), (3000, 114) MiB: 7 MiB per 1 000 connections = 7.168 KiB each.
    expect(memorySlope(runs)?.serverRssKiB).toBe(7.17);
  });

  it('needs two different sizes', () => {
    expect(memorySlope([snapshot(1_000, 100, 1, 1)])).toBeNull();
    expect(memorySlope([snapshot(1_000, 100, 1, 1), snapshot(1_000, 120, 1, 1)])).toBeNull();
  });
});

describe('peakSnapshot', () => {
  it('takes the peak of each figure on its own (they need not peak together)', () => {
    const peak = peakSnapshot([snapshot(990, 200, 2_000, 900, 1), snapshot(1_000, 190, 2_010, 1_500, 2)]);
    expect(peak).toEqual(snapshot(1_000, 200, 2_010, 1_500, 2));
    expect(peakSnapshot([])).toBeNull();
    expect(peakSnapshot([snapshot(1, 1, null, null)])?.tcpMemBytes).toBeNull();
  });
});

describe('connectionMemoryRows', () => {
  const run = (connection: string, clients: number, idle: MemorySnapshot | null) => ({
    clients,
    memory: {
      connection,
      perConnection: { idle: idle === null ? null : memoryPerConnection(snapshot(0, 100, 0, 0), idle), active: null },
      snapshots: { idle },
    },
  });

  it('has a row per kind of connection, figures of its largest run, and the slope across its sizes', () => {
    const rows = connectionMemoryRows([
      run('SSE subscriber', 2_000, snapshot(2_000, 140, 4_000, 400)),
      run('SSE subscriber', 10_000, snapshot(10_000, 300, 20_000, 2_000)),
      run('long-poll waiter', 2_000, snapshot(2_000, 120, 4_000, 0)),
      { clients: 5, memory: null },
    ]);
    expect(rows.map((row) => [row.connection, row.clients])).toEqual([
      ['SSE subscriber', [2_000, 10_000]],
      ['long-poll waiter', [2_000]],
    ]);
    expect(rows[0]!.idle?.serverRssKiB).toBe(20.48);
    expect(rows[0]!.idleSlope).toEqual({ serverRssKiB: 20.48, tcpKernelKiBBothEnds: 0.2, tcpKernelKiBPerSide: 0.1, tcpSocketsPerConnection: 2 });
    expect(rows[1]!.idleSlope).toBeNull();
  });
});

describe('connectionKind', () => {
  it('names what one connection of the run is to the publisher', () => {
    expect(connectionKind({ mode: 'sse', sseEncoding: 'identity', proxy: 'none' })).toBe('SSE subscriber');
    expect(connectionKind({ mode: 'sse', sseEncoding: 'gzip', proxy: 'none' })).toBe('SSE subscriber (gzip)');
    expect(connectionKind({ mode: 'long-poll', proxy: 'none' })).toBe('long-poll waiter');
    expect(connectionKind({ mode: 'websocket', websocketClient: 'lean', proxy: 'none' })).toBe('WebSocket');
    expect(connectionKind({ mode: 'poll', proxy: 'nginx' })).toBe('polling connection (keep-alive) + nginx');
  });
});
