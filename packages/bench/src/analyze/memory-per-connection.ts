import type { MemorySnapshot } from '../collect/memory-snapshot.js';

/** Memory one connection costs, from two snapshots or from the slope across runs of several sizes. */
export interface ConnectionMemory {
  /** The publisher's RSS per connection (KiB). */
  readonly serverRssKiB: number;
  /**
   * TCP socket buffer memory per connection (KiB, `/proc/net/sockstat` `mem`), both ends: the
   * fleet's socket and the publisher's are on the same machine (loopback) and both count.
   */
  readonly tcpKernelKiBBothEnds: number | null;
  /** Half of `tcpKernelKiBBothEnds`: an estimate of one side's, the publisher's (KiB). */
  readonly tcpKernelKiBPerSide: number | null;
  /** TCP sockets that came per connection: 2 on loopback (both ends); otherwise other work on the machine moved too. */
  readonly tcpSocketsPerConnection: number | null;
}

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

function figures(connections: number, rssBytes: number, tcpMemBytes: number | null, tcpSockets: number | null): ConnectionMemory {
  const kernel = tcpMemBytes === null ? null : tcpMemBytes / 1024 / connections;
  return {
    serverRssKiB: round(rssBytes / 1024 / connections),
    tcpKernelKiBBothEnds: kernel === null ? null : round(kernel),
    tcpKernelKiBPerSide: kernel === null ? null : round(kernel / 2),
    tcpSocketsPerConnection: tcpSockets === null ? null : round(tcpSockets / connections),
  };
}

const delta = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);

/**
 * Memory per connection: (with N connections − baseline) ÷ N, N being the clients connected
 * when `withClients` was taken; null without connections. The baseline is the publisher
 * started, no client yet, on the same machine a moment before.
 */
export function memoryPerConnection(baseline: MemorySnapshot, withClients: MemorySnapshot): ConnectionMemory | null {
  const connections = withClients.connected;
  if (connections <= 0) return null;
  return figures(
    connections,
    withClients.serverRssBytes - baseline.serverRssBytes,
    delta(baseline.tcpMemBytes, withClients.tcpMemBytes),
    delta(baseline.tcpInUse, withClients.tcpInUse),
  );
}

/**
 * The least-squares slope of memory against connections over snapshots taken with different
 * numbers of connections (runs of several sizes): what one more connection costs, with what
 * each run holds whatever its size (the baseline, the heap's slack) taken out. Null with fewer
 * than two different sizes.
 */
export function memorySlope(snapshots: readonly MemorySnapshot[]): ConnectionMemory | null {
  const sizes = new Set(snapshots.map((snapshot) => snapshot.connected));
  if (sizes.size < 2) return null;
  const slope = (value: (snapshot: MemorySnapshot) => number | null): number | null => {
    const points = snapshots.map((snapshot) => [snapshot.connected, value(snapshot)] as const);
    if (points.some(([, y]) => y === null)) return null;
    const meanX = points.reduce((sum, [x]) => sum + x, 0) / points.length;
    const meanY = points.reduce((sum, [, y]) => sum + y!, 0) / points.length;
    const covariance = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y! - meanY), 0);
    const variance = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
    return covariance / variance;
  };
  return figures(1, slope((s) => s.serverRssBytes)!, slope((s) => s.tcpMemBytes), slope((s) => s.tcpInUse));
}

/** The peak of each figure over `snapshots` (a run's measurement: updates in flight), or null when there are none. */
export function peakSnapshot(snapshots: readonly MemorySnapshot[]): MemorySnapshot | null {
  if (snapshots.length === 0) return null;
  const max = (values: Array<number | null>) => (values.some((value) => value === null) ? null : Math.max(...(values as number[])));
  return {
    atMs: snapshots.reduce((latest, snapshot) => Math.max(latest, snapshot.atMs), 0),
    connected: Math.max(...snapshots.map((snapshot) => snapshot.connected)),
    serverRssBytes: Math.max(...snapshots.map((snapshot) => snapshot.serverRssBytes)),
    tcpInUse: max(snapshots.map((snapshot) => snapshot.tcpInUse)),
    tcpMemBytes: max(snapshots.map((snapshot) => snapshot.tcpMemBytes)),
  };
}

/** What one connection of a run is, for the memory table: the mode as the publisher holds it. */
export function connectionKind(run: {
  readonly mode: 'poll' | 'sse' | 'long-poll' | 'websocket';
  readonly sseEncoding?: 'identity' | 'gzip';
  readonly websocketClient?: 'lean' | 'ws';
  readonly proxy: 'none' | 'nginx' | 'varnish';
  readonly peer?: 'nchan' | undefined;
}): string {
  const kind = {
    sse: run.sseEncoding === 'gzip' ? 'SSE subscriber (gzip)' : 'SSE subscriber',
    'long-poll': 'long-poll waiter',
    websocket: run.websocketClient === 'ws' ? 'WebSocket (ws client)' : 'WebSocket',
    poll: 'polling connection (keep-alive)',
  }[run.mode];
  if (run.peer !== undefined) return `${kind} of ${run.peer}`;
  return run.proxy === 'none' ? kind : `${kind} + ${run.proxy}`;
}

/** One kind of connection in the report's memory table. */
export interface ConnectionMemoryRow {
  readonly connection: string;
  /** The client counts of its runs in this invocation. */
  readonly clients: readonly number[];
  /** Per connection, idle and with updates in flight, from the largest run: (with N − baseline) ÷ N. */
  readonly idle: ConnectionMemory | null;
  readonly active: ConnectionMemory | null;
  /** The slope of the idle readings across its runs of different sizes; null with one size. */
  readonly idleSlope: ConnectionMemory | null;
}

/** A run as the memory table needs it. */
export interface RunMemoryInput {
  readonly clients: number;
  readonly memory: {
    readonly connection: string;
    readonly perConnection: { readonly idle: ConnectionMemory | null; readonly active: ConnectionMemory | null };
    readonly snapshots: { readonly idle: MemorySnapshot | null };
  } | null;
}

/** One row per kind of connection the runs held, in the order they first came. */
export function connectionMemoryRows(runs: readonly RunMemoryInput[]): ConnectionMemoryRow[] {
  const kinds = [...new Set(runs.flatMap((run) => (run.memory === null ? [] : [run.memory.connection])))];
  return kinds.map((connection) => {
    const own = runs.filter((run) => run.memory?.connection === connection);
    const largest = own.reduce((best, run) => (run.clients > best.clients ? run : best));
    return {
      connection,
      clients: own.map((run) => run.clients),
      idle: largest.memory!.perConnection.idle,
      active: largest.memory!.perConnection.active,
      idleSlope: memorySlope(own.flatMap((run) => (run.memory!.snapshots.idle === null ? [] : [run.memory!.snapshots.idle]))),
    };
  });
}
