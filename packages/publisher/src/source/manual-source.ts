import type { Observation } from '../model/observation.js';
import type { ElementSource, ObservationSink, SourceHealth } from './element-source.js';

/**
 * A source fed by the embedding program (or a test): each `push` becomes one element.
 * Pushes before `start` are refused rather than silently lost. It also stands for sources whose
 * elements arrive another way (`kind` says which): an ingest stream's POSTs, a cluster worker's
 * messages from the primary.
 */
export class ManualSource implements ElementSource {
  #sink: ObservationSink | undefined;
  #started = false;

  constructor(
    readonly expectedIntervalMs: number | null = null,
    readonly kind: string = 'manual',
  ) {}

  start(sink: ObservationSink): void {
    this.#started = true;
    this.#sink = sink;
  }

  stop(): void {
    this.#sink = undefined;
  }

  health(): SourceHealth {
    return { state: this.#sink !== undefined ? 'ok' : this.#started ? 'stopped' : 'starting', recordsRejected: 0 };
  }

  push(observations: readonly Observation[], generatedAt: Date = new Date()): void {
    if (this.#sink === undefined) throw new Error('ManualSource is not started');
    this.#sink(observations, generatedAt);
  }
}
