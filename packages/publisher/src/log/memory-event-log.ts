import { randomBytes } from 'node:crypto';
import type { EventLog, Sequenced } from './event-log.js';

/** An in-memory ring buffer keeping the newest `capacity` entries. */
export class MemoryEventLog<T extends Sequenced> implements EventLog<T> {
  readonly epoch: string;
  readonly capacity: number;
  readonly #ring: Array<T | undefined>;
  #latestSeq = 0;
  #size = 0;

  constructor(capacity: number, epoch: string = randomBytes(6).toString('base64url')) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError(`Log capacity must be a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
    this.epoch = epoch;
    this.#ring = new Array<T | undefined>(capacity);
  }

  get nextSeq(): number {
    return this.#latestSeq + 1;
  }

  get latestSeq(): number {
    return this.#latestSeq;
  }

  get oldestSeq(): number | undefined {
    return this.#size === 0 ? undefined : this.#latestSeq - this.#size + 1;
  }

  /**
   * Makes an empty log continue a numbering that started elsewhere (a worker joining a cluster
   * whose elements are already at `seq`): the next appended entry must carry `seq`.
   */
  startAt(seq: number): void {
    if (this.#size !== 0) throw new RangeError('Only an empty log can start at another sequence number');
    if (!Number.isSafeInteger(seq) || seq < 1) throw new RangeError(`Sequence numbers start at 1 or more, got ${seq}`);
    this.#latestSeq = seq - 1;
  }

  append(entry: T): void {
    if (entry.seq !== this.nextSeq) {
      throw new RangeError(`Expected sequence number ${this.nextSeq}, got ${entry.seq}`);
    }
    this.#ring[entry.seq % this.capacity] = entry;
    this.#latestSeq = entry.seq;
    this.#size = Math.min(this.#size + 1, this.capacity);
  }

  get(seq: number): T | undefined {
    const oldest = this.oldestSeq;
    if (oldest === undefined || !Number.isSafeInteger(seq) || seq < oldest || seq > this.#latestSeq) return undefined;
    return this.#ring[seq % this.capacity];
  }

  latest(): T | undefined {
    return this.get(this.#latestSeq);
  }
}
