import type { Observation } from '../model/observation.js';

/** Receives each batch of observations a source produces, stamped with its generation time. */
export type ObservationSink = (observations: readonly Observation[], generatedAt: Date) => void;

/** Where a stream's elements come from. */
export interface ElementSource {
  /** Milliseconds between two elements, or `null` for an irregular stream. */
  readonly expectedIntervalMs: number | null;
  start(sink: ObservationSink): void;
  stop(): void;
}
