import { LatencyRecorder, type LatencySummary } from '@rdf-stream/client';

/** One element's latencies as a worker measured them. */
export interface MeasuredElement {
  readonly seq: number;
  /** When the publisher generated it (epoch ms, from the element itself). */
  readonly generatedAtMs: number;
  /** Its latencies on the worker's clients: an encoded HDR histogram (`LatencyRecorder.encode`). */
  readonly histogram: string;
}

/** One row of the per-element table: how one element reached the clients that got it. */
export interface ElementRow {
  readonly seq: number;
  /** Seconds from the end of the ramp to the element's generation (negative: never, the ramp is not measured). */
  readonly generatedAtSeconds: number;
  /** Published before every client had its first answer: reported apart from the headline. */
  readonly warmup: boolean;
  /** Clients that got it (within the measurement). */
  readonly received: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export interface ElementLatencies {
  /** Latency over the elements published once every client was connected: the headline. */
  readonly headline: LatencySummary;
  /** Latency over the warm-up elements; null when there were none. */
  readonly warmup: LatencySummary | null;
  readonly warmupElements: number;
  readonly perElement: ElementRow[];
}

const round = (value: number) => Math.round(value * 10) / 10;

/**
 * Merges the workers' per-element histograms and splits the elements in two: warm-up, generated
 * before `allConnectedAtMs` (the moment the last client had its first answer: until then, the
 * publisher was still accepting a crowd, and the first element's tail is the ramp's, not the
 * steady state's), and the rest, which make the headline percentiles.
 */
export function elementLatencies(reports: ReadonlyArray<readonly MeasuredElement[]>, measureFromMs: number, allConnectedAtMs: number): ElementLatencies {
  const bySeq = new Map<number, { generatedAtMs: number; recorder: LatencyRecorder }>();
  for (const element of reports.flat()) {
    let merged = bySeq.get(element.seq);
    if (merged === undefined) {
      merged = { generatedAtMs: element.generatedAtMs, recorder: new LatencyRecorder() };
      bySeq.set(element.seq, merged);
    }
    merged.recorder.merge(element.histogram);
  }
  const headline = new LatencyRecorder();
  const warmup = new LatencyRecorder();
  const perElement = [...bySeq]
    .sort(([a], [b]) => a - b)
    .map(([seq, { generatedAtMs, recorder }]): ElementRow => {
      const isWarmup = generatedAtMs < allConnectedAtMs;
      (isWarmup ? warmup : headline).merge(recorder);
      const summary = recorder.summary();
      return {
        seq,
        generatedAtSeconds: round((generatedAtMs - measureFromMs) / 1000),
        warmup: isWarmup,
        received: summary.count,
        p50: round(summary.p50),
        p99: round(summary.p99),
        max: round(summary.max),
      };
    });
  const warmupElements = perElement.filter((row) => row.warmup).length;
  return { headline: headline.summary(), warmup: warmupElements === 0 ? null : warmup.summary(), warmupElements, perElement };
}
