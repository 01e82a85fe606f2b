import type { FormatName } from '@rdf-stream/protocol';
import { type EvictionReason, GuardedSink, type SubscriberQueueLimits, type SubscriberSink } from './guarded-sink.js';

export type { EvictionReason, SubscriberQueueLimits, SubscriberSink } from './guarded-sink.js';

/**
 * One SSE connection. It is `live` once it has been sent every retained element it asked for;
 * from then on the broadcaster writes to it. `lastSentSeq` makes delivery exactly-once at the
 * seam between replay and live, whatever the interleaving of the two. Its queue and stall
 * limits are those of every push connection (`GuardedSink`).
 */
export class Subscriber {
  live = false;
  lastSentSeq: number;
  readonly #connection: GuardedSink;

  constructor(
    readonly sink: SubscriberSink,
    readonly format: FormatName,
    lastSentSeq: number,
    limits: SubscriberQueueLimits,
    /** Called once when the subscriber is cut for holding too much (not on close). */
    onEvicted: (subscriber: Subscriber, reason: EvictionReason) => void = () => undefined,
  ) {
    this.lastSentSeq = lastSentSeq;
    this.#connection = new GuardedSink(sink, limits, (reason) => onEvicted(this, reason));
  }

  get closed(): boolean {
    return this.#connection.closed;
  }

  /** Whether writing `bytes` more would exceed the queue limit. */
  wouldOverflow(bytes: number): boolean {
    return this.#connection.wouldOverflow(bytes);
  }

  /** Writes an element's frame; returns false when the sink asks to wait for `drain`. */
  send(frame: Buffer, seq: number): boolean {
    this.lastSentSeq = seq;
    return this.#connection.write(frame);
  }

  /** Writes bytes that are not an element (a heartbeat, a gap); see `GuardedSink.write`. */
  write(frame: Buffer | string): boolean {
    return this.#connection.write(frame);
  }

  /** Cuts the connection at once: it can resume by id. */
  evict(reason: EvictionReason = 'queue'): void {
    this.#connection.evict(reason);
  }

  /** Ends the stream after `farewell` (e.g. a `retry:` hint at shutdown). */
  close(farewell?: string): void {
    this.#connection.close(farewell);
  }

  /** Resolves when the sink has drained, or false if it closed (or was evicted) first. */
  drained(): Promise<boolean> {
    return this.#connection.drained();
  }
}
