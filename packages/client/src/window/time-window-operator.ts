import type { ClosedWindow, TimeWindowSpec, WindowStats } from './window-spec.js';

export interface TimeWindowOptions {
  /**
   * Out-of-orderness tolerated: the watermark trails the newest event time by this much, and a
   * window [start, end) closes once the watermark reaches `end`. Default 0.
   */
  readonly allowedLatenessMs?: number;
  /** Most empty windows emitted in one go when event time jumps (the rest are counted). Default 1 000. */
  readonly maxConsecutiveEmptyWindows?: number;
  /** Most items held at once (count). Default 100 000. */
  readonly maxBufferedItems?: number;
}

/**
 * Sliding (or tumbling) windows on event time, aligned to the epoch: window k covers
 * [k·STEP, k·STEP + RANGE), unless `start` aligns them to another time. `push` returns the windows the new watermark closed, in order,
 * empty ones included; an element whose every window has closed is late: counted, not used.
 */
export class TimeWindowOperator<T> {
  readonly stats: WindowStats = { late: 0, skippedEmptyWindows: 0, overflow: 0 };
  readonly #spec: TimeWindowSpec;
  readonly #allowedLatenessMs: number;
  readonly #maxEmpty: number;
  readonly #maxBuffered: number;
  #buffer: Array<{ time: number; item: T }> = [];
  /** Start of the next window to close; undefined before the first element. */
  #nextStart: number | undefined;
  #watermark = Number.NEGATIVE_INFINITY;

  constructor(spec: TimeWindowSpec, options: TimeWindowOptions = {}) {
    if (!(spec.rangeMs > 0 && spec.stepMs > 0)) throw new RangeError('RANGE and STEP must be positive');
    this.#spec = spec;
    this.#allowedLatenessMs = options.allowedLatenessMs ?? 0;
    this.#maxEmpty = options.maxConsecutiveEmptyWindows ?? 1_000;
    this.#maxBuffered = options.maxBufferedItems ?? 100_000;
  }

  get watermark(): number {
    return this.#watermark;
  }

  /**
   * Opens the first window at a given time instead of at the first element: it is
   * [firstEndMs − RANGE, firstEndMs), the next ones every STEP after it (so the alignment
   * moves from the Unix epoch to `firstEndMs`). From then on windows close on the watermark even
   * before any element, empty ones included. Before the first element only.
   */
  start(firstEndMs: number): void {
    if (this.#nextStart !== undefined) throw new Error('the windows have started already');
    this.#nextStart = firstEndMs - this.#spec.rangeMs;
  }

  /** Adds an element stamped `time` (ms) and returns the windows that closed. */
  push(time: number, item: T): ClosedWindow<T>[] {
    const { rangeMs, stepMs } = this.#spec;
    if (this.#nextStart === undefined) {
      // The first window that contains `time`.
      this.#nextStart = (Math.floor((time - rangeMs) / stepMs) + 1) * stepMs;
    }
    if (time < this.#nextStart) {
      this.stats.late++;
    } else if (this.#buffer.length >= this.#maxBuffered) {
      this.stats.overflow++;
    } else {
      this.#buffer.push({ time, item });
    }
    this.#watermark = Math.max(this.#watermark, time - this.#allowedLatenessMs);
    return this.#closeUpTo(this.#watermark);
  }

  /**
   * Moves the watermark to `time − allowedLatenessMs` without an element (time passing on the
   * clock while the stream is quiet); returns the windows that closed.
   */
  advance(time: number): ClosedWindow<T>[] {
    this.#watermark = Math.max(this.#watermark, time - this.#allowedLatenessMs);
    return this.#closeUpTo(this.#watermark);
  }

  /** Closes every window that holds something (end of stream). */
  flush(): ClosedWindow<T>[] {
    if (this.#buffer.length === 0) return [];
    const newest = Math.max(...this.#buffer.map((entry) => entry.time));
    return this.#closeUpTo(newest + this.#spec.rangeMs);
  }

  #closeUpTo(watermark: number): ClosedWindow<T>[] {
    const { rangeMs, stepMs } = this.#spec;
    const closed: ClosedWindow<T>[] = [];
    if (this.#nextStart === undefined) return closed;
    let nextStart = this.#nextStart;
    while (nextStart + rangeMs <= watermark) {
      // Windows ending at or before the earliest buffered element are empty (everything
      // buffered is at or after nextStart): of a long run of them, emit only the newest.
      const earliest = this.#buffer.reduce((min, entry) => Math.min(min, entry.time), Number.POSITIVE_INFINITY);
      const emptyDue = Math.floor((Math.min(earliest, watermark) - rangeMs - nextStart) / stepMs) + 1;
      if (emptyDue > this.#maxEmpty) {
        this.stats.skippedEmptyWindows += emptyDue - this.#maxEmpty;
        nextStart += (emptyDue - this.#maxEmpty) * stepMs;
        continue;
      }
      const end = nextStart + rangeMs;
      closed.push({ start: nextStart, end, items: this.#buffer.filter((entry) => entry.time < end).map((entry) => entry.item) });
      nextStart += stepMs;
      const keepFrom = nextStart;
      this.#buffer = this.#buffer.filter((entry) => entry.time >= keepFrom);
    }
    this.#nextStart = nextStart;
    return closed;
  }
}
