import * as hdr from 'hdr-histogram-js';

/** Latency percentiles in milliseconds. */
export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/** Highest latency recorded without clamping: one hour, in microseconds. */
export const MAX_TRACKABLE_LATENCY_US = 3_600_000_000;

/**
 * Records latencies in an HDR histogram (microsecond resolution, 3 significant digits, so
 * memory is fixed whatever the count), mergeable across processes through `encode()`.
 * Negative latencies (clock error) are recorded as 0 and counted in `negative`.
 */
export class LatencyRecorder {
  readonly #histogram: hdr.Histogram;
  negative = 0;

  constructor(histogram?: hdr.Histogram) {
    this.#histogram =
      histogram ??
      hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: MAX_TRACKABLE_LATENCY_US, numberOfSignificantValueDigits: 3 });
  }

  record(latencyMs: number): void {
    if (!Number.isFinite(latencyMs)) return;
    if (latencyMs < 0) this.negative++;
    const micros = Math.round(Math.max(0, latencyMs) * 1000);
    this.#histogram.recordValue(Math.min(micros, MAX_TRACKABLE_LATENCY_US));
  }

  get count(): number {
    return this.#histogram.totalCount;
  }

  /** Latency at `percentile` (0–100) in milliseconds. */
  percentile(percentile: number): number {
    return this.#histogram.getValueAtPercentile(percentile) / 1000;
  }

  summary(): LatencySummary {
    const h = this.#histogram;
    return {
      count: h.totalCount,
      p50: h.getValueAtPercentile(50) / 1000,
      p90: h.getValueAtPercentile(90) / 1000,
      p99: h.getValueAtPercentile(99) / 1000,
      max: h.maxValue / 1000,
      mean: h.totalCount === 0 ? 0 : h.mean / 1000,
    };
  }

  /** Compressed, base64: send it to another process and `merge` it there. */
  encode(): string {
    return hdr.encodeIntoCompressedBase64(this.#histogram);
  }

  merge(other: LatencyRecorder | string): void {
    const histogram = typeof other === 'string' ? hdr.decodeFromCompressedBase64(other) : other.#histogram;
    this.#histogram.add(histogram);
    if (typeof other !== 'string') this.negative += other.negative;
  }
}
