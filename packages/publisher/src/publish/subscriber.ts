import type { FormatName } from '@rdf-stream/protocol';

/** The part of `http.ServerResponse` a subscriber writes to (a fake in unit tests). */
export interface SubscriberSink {
  readonly writableLength: number;
  readonly destroyed: boolean;
  write(chunk: Buffer | string): boolean;
  end(chunk?: Buffer | string): unknown;
  destroy(): unknown;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

/** How much a subscriber may hold back before it is cut (it can resume by id). */
export interface SubscriberQueueLimits {
  /** Bytes that may wait unsent in the process. */
  readonly maxQueueBytes: number;
  /**
   * Milliseconds the connection may refuse data (a write asked to wait for `drain`, i.e. the
   * kernel's socket buffers are full) without draining. Bounds what a reader that stopped
   * reading holds, kernel buffers included, whatever the stream's rate.
   */
  readonly stallTimeoutMs: number;
}

/** Why a subscriber was cut. */
export type EvictionReason = 'queue' | 'stall';

/**
 * One SSE connection. It is `live` once it has been sent every retained element it asked for;
 * from then on the broadcaster writes to it. `lastSentSeq` makes delivery exactly-once at the
 * seam between replay and live, whatever the interleaving of the two.
 */
export class Subscriber {
  live = false;
  lastSentSeq: number;
  #closed = false;
  #stallTimer: NodeJS.Timeout | undefined;
  readonly #limits: SubscriberQueueLimits;
  readonly #onEvicted: (subscriber: Subscriber, reason: EvictionReason) => void;

  constructor(
    readonly sink: SubscriberSink,
    readonly format: FormatName,
    lastSentSeq: number,
    limits: SubscriberQueueLimits,
    /** Called once when the subscriber is cut for holding too much (not on close). */
    onEvicted: (subscriber: Subscriber, reason: EvictionReason) => void = () => undefined,
  ) {
    this.lastSentSeq = lastSentSeq;
    this.#limits = limits;
    this.#onEvicted = onEvicted;
    sink.once('close', () => {
      this.#closed = true;
      this.#clearStall();
    });
  }

  get closed(): boolean {
    return this.#closed || this.sink.destroyed;
  }

  /** Whether writing `bytes` more would exceed the queue limit. */
  wouldOverflow(bytes: number): boolean {
    return this.sink.writableLength + bytes > this.#limits.maxQueueBytes;
  }

  /** Writes an element's frame; returns false when the sink asks to wait for `drain`. */
  send(frame: Buffer, seq: number): boolean {
    this.lastSentSeq = seq;
    return this.write(frame);
  }

  /**
   * Writes bytes that are not an element (a heartbeat, a gap); returns false when the sink asks
   * to wait for `drain`, and from then on evicts the subscriber unless it drains within
   * `stallTimeoutMs`.
   */
  write(frame: Buffer | string): boolean {
    const accepted = this.sink.write(frame);
    if (!accepted) this.#watchStall();
    return accepted;
  }

  /** Cuts the connection at once: it can resume by id. */
  evict(reason: EvictionReason = 'queue'): void {
    if (this.closed) return;
    this.#closed = true;
    this.#clearStall();
    this.sink.destroy();
    this.#onEvicted(this, reason);
  }

  /** Ends the stream after `farewell` (e.g. a `retry:` hint at shutdown). */
  close(farewell?: string): void {
    this.#clearStall();
    // A client gone before the stream ended may leave its socket half open: release it.
    if (this.closed) {
      this.sink.destroy();
      return;
    }
    this.#closed = true;
    this.sink.end(farewell);
  }

  /** Resolves when the sink has drained, or false if it closed (or was evicted) first. */
  drained(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    this.#watchStall();
    return new Promise((resolve) => {
      const onDrain = () => {
        this.sink.off('close', onClose);
        resolve(true);
      };
      const onClose = () => {
        this.sink.off('drain', onDrain);
        resolve(false);
      };
      this.sink.once('drain', onDrain);
      this.sink.once('close', onClose);
    });
  }

  #watchStall(): void {
    if (this.#stallTimer !== undefined || this.closed) return;
    const onDrain = () => this.#clearStall();
    this.#stallTimer = setTimeout(() => {
      this.#stallTimer = undefined;
      this.sink.off('drain', onDrain);
      this.evict('stall');
    }, this.#limits.stallTimeoutMs);
    // A stall never keeps the process alive.
    this.#stallTimer.unref();
    this.sink.once('drain', onDrain);
  }

  #clearStall(): void {
    if (this.#stallTimer === undefined) return;
    clearTimeout(this.#stallTimer);
    this.#stallTimer = undefined;
  }
}
