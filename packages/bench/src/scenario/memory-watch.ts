import { type MemorySnapshot, readMemorySnapshot } from '../collect/memory-snapshot.js';

/** How often the memory is read during the measurement, for its peak (ms). */
export const MEMORY_SAMPLE_INTERVAL_MS = 500;

/** What the watch needs of the run: the fleet's connected clients and the elements published so far. */
export interface MemoryWatchRun {
  readonly pids: readonly number[];
  readonly clients: number;
  /** End of the ramp (epoch ms): the measurement starts. */
  readonly measureFromMs: number;
  readonly measureUntilMs: number;
  readonly intervalSeconds: number;
  connected(): number;
  published(): number;
}

/**
 * Reads the publisher's memory (and the machine's TCP memory) during a run: the idle snapshot,
 * once every client is connected (or half the measurement has gone by), half an interval after
 * an element — its broadcast over and the next not yet due; and, every
 * `MEMORY_SAMPLE_INTERVAL_MS` of the measurement, the snapshots whose peak is the cost of
 * connections with updates in flight.
 */
export class MemoryWatch {
  idle: MemorySnapshot | null = null;
  readonly during: MemorySnapshot[] = [];
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #run: MemoryWatchRun;

  constructor(run: MemoryWatchRun) {
    this.#run = run;
    this.#after(run.measureFromMs - Date.now(), () => {
      const sample = setInterval(() => this.during.push(this.#read()), MEMORY_SAMPLE_INTERVAL_MS);
      this.#timers.add(sample);
      this.#waitForClients();
    });
  }

  stop(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  #read(): MemorySnapshot {
    return readMemorySnapshot(this.#run.pids, this.#run.connected());
  }

  #after(delayMs: number, then: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      then();
    }, Math.max(0, delayMs));
    this.#timers.add(timer);
  }

  /** Checks ten times a second: every client connected, or half the measurement gone. */
  #waitForClients(): void {
    const halfway = this.#run.measureFromMs + (this.#run.measureUntilMs - this.#run.measureFromMs) / 2;
    if (this.#run.connected() >= this.#run.clients || Date.now() >= halfway) this.#waitForElement(this.#run.published());
    else this.#after(100, () => this.#waitForClients());
  }

  #waitForElement(seen: number): void {
    if (this.#run.published() > seen) this.#after((this.#run.intervalSeconds * 1000) / 2, () => (this.idle = this.#read()));
    else if (Date.now() < this.#run.measureUntilMs) this.#after(50, () => this.#waitForElement(seen));
  }
}
