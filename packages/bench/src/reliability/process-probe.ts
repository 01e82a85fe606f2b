import { readFileSync } from 'node:fs';
import { readTcpSockets, type TcpSocketEntry } from '../collect/port-usage.js';

/** Resident set size of a process (bytes), from /proc. */
export function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? 0 : Number(match[1]) * 1024;
}

/** Memory the kernel holds in TCP buffers, machine-wide (bytes), from /proc/net/sockstat. */
export function tcpMemoryBytes(): number {
  const match = /^TCP:.* mem (\d+)$/m.exec(readFileSync('/proc/net/sockstat', 'utf8'));
  return match === null ? 0 : Number(match[1]) * 4096;
}

/** Samples `read` every `intervalMs` until stopped; keeps every sample with its time. */
export class Sampler {
  readonly samples: Array<{ atMs: number; value: number }> = [];
  readonly #timer: NodeJS.Timeout;

  constructor(read: () => number, intervalMs = 1_000) {
    const started = performance.now();
    const sample = () => {
      try {
        this.samples.push({ atMs: performance.now() - started, value: read() });
      } catch {
        // the process is gone
      }
    };
    sample();
    this.#timer = setInterval(sample, intervalMs);
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  get max(): number {
    return Math.max(0, ...this.samples.map((sample) => sample.value));
  }
}

/** A least-squares line's slope through points (value per hour) and that slope's standard error. */
export interface Trend {
  readonly perHour: number;
  readonly standardErrorPerHour: number;
}

/**
 * The least-squares slope of `points` per hour, with its standard error (the spread of the
 * residuals over the spread of the times): a slope smaller than about twice its standard error is
 * indistinguishable from noise over that run.
 */
export function trendOf(points: ReadonlyArray<{ readonly atMs: number; readonly value: number }>): Trend {
  const usable = points.filter((point) => Number.isFinite(point.value));
  if (usable.length < 3) return { perHour: 0, standardErrorPerHour: Number.POSITIVE_INFINITY };
  const meanX = usable.reduce((sum, point) => sum + point.atMs, 0) / usable.length;
  const meanY = usable.reduce((sum, point) => sum + point.value, 0) / usable.length;
  let covariance = 0;
  let variance = 0;
  for (const point of usable) {
    covariance += (point.atMs - meanX) * (point.value - meanY);
    variance += (point.atMs - meanX) ** 2;
  }
  if (variance === 0) return { perHour: 0, standardErrorPerHour: Number.POSITIVE_INFINITY };
  const slope = covariance / variance;
  const intercept = meanY - slope * meanX;
  const residuals = usable.reduce((sum, point) => sum + (point.value - (intercept + slope * point.atMs)) ** 2, 0);
  const standardError = Math.sqrt(residuals / (usable.length - 2) / variance);
  return { perHour: slope * 3_600_000, standardErrorPerHour: standardError * 3_600_000 };
}

/** The least share of its samples a floor window must have (the rest were starved). */
const FLOOR_WINDOW_MIN_SHARE = 0.25;

/**
 * The lower envelope of `points`, taken every `sampleMs`: the lowest point of each `windowMs`-long
 * window. Left out: the first and last windows (cut short where the points begin and end: their
 * lowest point would sit higher) and windows with less than a quarter of their samples (a
 * sampler starved by a busy event loop: the scenario's own clients). A process that leaks raises
 * its floor; garbage waiting for the next full collection only raises its peaks.
 */
export function floorOf<T extends { readonly atMs: number; readonly value: number }>(points: readonly T[], windowMs: number, sampleMs: number): T[] {
  const windows = new Map<number, { lowest: T; count: number }>();
  for (const point of points) {
    if (!Number.isFinite(point.value)) continue;
    const key = Math.floor(point.atMs / windowMs);
    const window = windows.get(key);
    if (window === undefined) windows.set(key, { lowest: point, count: 1 });
    else {
      window.count++;
      if (point.value < window.lowest.value) window.lowest = point;
    }
  }
  const keys = [...windows.keys()].sort((a, b) => a - b);
  return keys
    .slice(1, -1)
    .map((key) => windows.get(key)!)
    .filter((window) => window.count >= FLOOR_WINDOW_MIN_SHARE * (windowMs / sampleMs))
    .map((window) => window.lowest);
}

/** The value of a Prometheus counter or gauge in a /metrics text, summed over its label sets. */
export function metricSum(metricsText: string, name: string): number {
  let sum = 0;
  for (const line of metricsText.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Percentile `p` (0–100) of `values` (sorted in place). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  values.sort((a, b) => a - b);
  // Nearest rank, at least the first: p = 0 is the minimum.
  return values[Math.min(values.length - 1, Math.max(0, Math.ceil((p / 100) * values.length) - 1))]!;
}

/**
 * Bytes the kernel holds for the connections whose client end has one of `clientPorts`, from
 * /proc/net/tcp{,6} (`readTcpSockets`): what the server's side has not had acknowledged
 * (`tx_queue`) and what the client's side has received but its reader not read (`rx_queue`).
 * Both ends must be on this machine (loopback); `serverPort` tells the server's side apart.
 */
export function kernelQueuedBytes(
  serverPort: number,
  clientPorts: ReadonlySet<number>,
  sockets: readonly TcpSocketEntry[] = readTcpSockets(),
): { serverSendBytes: number; clientReceiveBytes: number; connections: number } {
  let serverSendBytes = 0;
  let clientReceiveBytes = 0;
  const open = new Set<number>();
  for (const socket of sockets) {
    if (!socket.established) continue;
    if (socket.port === serverPort && clientPorts.has(socket.remotePort)) {
      serverSendBytes += socket.sendQueueBytes;
      open.add(socket.remotePort);
    } else if (socket.remotePort === serverPort && clientPorts.has(socket.port)) {
      clientReceiveBytes += socket.receiveQueueBytes;
    }
  }
  return { serverSendBytes, clientReceiveBytes, connections: open.size };
}
