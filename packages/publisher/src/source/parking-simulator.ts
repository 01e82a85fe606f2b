import { streamResources } from '@rdf-stream/protocol';
import type { Observation } from '../model/observation.js';
import { datex } from '../model/vocabulary.js';
import type { ElementSource, ObservationSink, SourceHealth } from './element-source.js';
import { SeededRandom } from './seeded-random.js';
import { type Clock, realClock } from '../clock-and-logger.js';

export interface ParkingSimulatorOptions {
  /** `{base}/streams/{id}`: sensors and facilities are minted below it. */
  readonly streamIri: string;
  readonly facilities: number;
  readonly intervalMs: number;
  readonly seed: number;
  /** Injected for tests; defaults to the wall clock and real timers. */
  readonly clock?: Clock;
}

interface Facility {
  readonly id: string;
  readonly capacity: number;
  /** Occupancy the walk drifts towards, as a fraction of capacity. */
  readonly typicalOccupancy: number;
  free: number;
}

/**
 * The demo stream: park-and-ride facilities whose free spaces follow a mean-reverting random
 * walk (consecutive values are close, as in real parking data, not white noise). Elements are
 * emitted on a fixed schedule (`start + n × interval`) so that the publisher can tell caches
 * exactly when the next one is due.
 */
export class ParkingSimulator implements ElementSource {
  readonly kind = 'simulator';
  readonly expectedIntervalMs: number;
  readonly #options: ParkingSimulatorOptions;
  readonly #random: SeededRandom;
  readonly #clock: Clock;
  readonly #facilities: Facility[];
  #timer: unknown;
  #running = false;
  #started = false;

  constructor(options: ParkingSimulatorOptions) {
    this.#options = options;
    this.expectedIntervalMs = options.intervalMs;
    this.#random = new SeededRandom(options.seed);
    this.#clock = options.clock ?? realClock;
    this.#facilities = Array.from({ length: options.facilities }, (_, index) => {
      const capacity = this.#random.integer(8, 90) * 10;
      const typicalOccupancy = 0.45 + this.#random.next() * 0.45;
      return {
        id: `p${String(index + 1).padStart(2, '0')}`,
        capacity,
        typicalOccupancy,
        free: Math.round(capacity * (1 - typicalOccupancy)),
      };
    });
  }

  /** Advances the walk one step and returns one observation per facility. */
  step(): Observation[] {
    const minted = streamResources(this.#options.streamIri);
    return this.#facilities.map((facility) => {
      const target = facility.capacity * (1 - facility.typicalOccupancy);
      const pull = 0.1 * (target - facility.free);
      const noise = this.#random.normal() * Math.max(1, facility.capacity * 0.01);
      facility.free = Math.min(facility.capacity, Math.max(0, Math.round(facility.free + pull + noise)));
      return {
        id: facility.id,
        sensor: minted.sensor(facility.id),
        observedProperty: datex.parkingNumberOfVacantSpaces,
        featureOfInterest: minted.featureOfInterest(facility.id),
        simpleResult: facility.free,
      };
    });
  }

  /** Emits one element at once, then one every interval until `stop()`. */
  start(sink: ObservationSink): void {
    if (this.#running) return;
    this.#running = true;
    this.#started = true;
    const startedAt = this.#clock.now();
    let tick = 0;
    const emit = () => {
      if (!this.#running) return;
      sink(this.step(), new Date(this.#clock.now()));
      // Schedule on the grid; ticks missed while the event loop was blocked are skipped.
      const now = this.#clock.now();
      tick = Math.max(tick + 1, Math.floor((now - startedAt) / this.expectedIntervalMs) + 1);
      this.#timer = this.#clock.setTimeout(emit, startedAt + tick * this.expectedIntervalMs - now);
    };
    emit();
  }

  stop(): void {
    this.#running = false;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  health(): SourceHealth {
    return { state: this.#running ? 'ok' : this.#started ? 'stopped' : 'starting', recordsRejected: 0 };
  }
}
