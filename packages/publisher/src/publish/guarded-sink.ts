/** The part of `http.ServerResponse` a push connection writes to (a fake in unit tests). */
export interface SubscriberSink {
  readonly writableLength: number;
  readonly destroyed: boolean;
  write(chunk: Buffer | string): boolean;
  end(chunk?: Buffer | string): unknown;
  destroy(): unknown;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
  /**
   * Cuts the connection telling the client why, where the transport can (a WebSocket close
   * frame); a sink without it is destroyed.
   */
  cut?(reason: EvictionReason): void;
}

/** How much a push connection may hold back before it is cut (its client can resume by id). */
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

/** Why a connection was cut. */
export type EvictionReason = 'queue' | 'stall';

/** The timers a stall is watched with: the real ones, or a manual clock in tests. */
export interface StallTimers {
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: StallTimers = {
  // A stall never keeps the process alive.
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * A push connection (an SSE subscriber, a notification receiver) with the two limits every one
 * has: it is cut when its unsent bytes would pass `maxQueueBytes` (`wouldOverflow`, then
 * `evict`), and when its socket refuses data for `stallTimeoutMs` without draining. Cut, it
 * reports why once; closed by its client, it reports nothing.
 */
export class GuardedSink {
  #closed = false;
  #stallTimer: unknown;
  readonly #limits: SubscriberQueueLimits;
  readonly #onEvicted: (reason: EvictionReason) => void;
  readonly #timers: StallTimers;

  constructor(
    readonly sink: SubscriberSink,
    limits: SubscriberQueueLimits,
    /** Called once when the connection is cut for holding too much (not on close). */
    onEvicted: (reason: EvictionReason) => void = () => undefined,
    timers: StallTimers = realTimers,
  ) {
    this.#limits = limits;
    this.#onEvicted = onEvicted;
    this.#timers = timers;
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

  /**
   * Writes `frame`; returns false when the sink asks to wait for `drain`, and from then on cuts
   * the connection unless it drains within `stallTimeoutMs`.
   */
  write(frame: Buffer | string): boolean {
    const accepted = this.sink.write(frame);
    if (!accepted) this.#watchStall();
    return accepted;
  }

  /** Cuts the connection at once: its client can resume by id. */
  evict(reason: EvictionReason = 'queue'): void {
    if (this.closed) return;
    this.#closed = true;
    this.#clearStall();
    if (this.sink.cut === undefined) this.sink.destroy();
    else this.sink.cut(reason);
    this.#onEvicted(reason);
  }

  /** Ends the stream after `farewell` (e.g. a `retry:` hint at shutdown). */
  close(farewell?: Buffer | string): void {
    this.#clearStall();
    // A client gone before the stream ended may leave its socket half open: release it.
    if (this.closed) {
      this.sink.destroy();
      return;
    }
    this.#closed = true;
    this.sink.end(farewell);
  }

  /** Resolves when the sink has drained, or false if it closed (or was cut) first. */
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
    this.#stallTimer = this.#timers.setTimeout(() => {
      this.#stallTimer = undefined;
      this.sink.off('drain', onDrain);
      this.evict('stall');
    }, this.#limits.stallTimeoutMs);
    this.sink.once('drain', onDrain);
  }

  #clearStall(): void {
    if (this.#stallTimer === undefined) return;
    this.#timers.clearTimeout(this.#stallTimer);
    this.#stallTimer = undefined;
  }
}
