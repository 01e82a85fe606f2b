import { readFileSync } from 'node:fs';

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

  /** Least-squares slope of the samples, per hour. */
  slopePerHour(): number {
    return Sampler.slopeOf(this.samples);
  }

  /** Least-squares slope of `points`, per hour. */
  static slopeOf(points: ReadonlyArray<{ atMs: number; value: number }>): number {
    if (points.length < 2) return 0;
    const meanX = points.reduce((sum, point) => sum + point.atMs, 0) / points.length;
    const meanY = points.reduce((sum, point) => sum + point.value, 0) / points.length;
    let covariance = 0;
    let variance = 0;
    for (const point of points) {
      covariance += (point.atMs - meanX) * (point.value - meanY);
      variance += (point.atMs - meanX) ** 2;
    }
    return variance === 0 ? 0 : (covariance / variance) * 3_600_000;
  }
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
  return values[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)]!;
}
