import type { Observation } from '../model/observation.js';
import type { ElementSource, ObservationSink, SourceHealth } from './element-source.js';

/**
 * A source fed by the embedding program (or a test): each `push` becomes one element.
 * Pushes before `start` are refused rather than silently lost.
 */
export class ManualSource implements ElementSource {
  readonly kind = 'manual';
  #sink: ObservationSink | undefined;

  constructor(readonly expectedIntervalMs: number | null = null) {}

  start(sink: ObservationSink): void {
    this.#sink = sink;
  }

  stop(): void {
    this.#sink = undefined;
  }

  health(): SourceHealth {
    return { state: this.#sink === undefined ? 'stopped' : 'ok', recordsRejected: 0 };
  }

  push(observations: readonly Observation[], generatedAt: Date = new Date()): void {
    if (this.#sink === undefined) throw new Error('ManualSource is not started');
    this.#sink(observations, generatedAt);
  }
}
