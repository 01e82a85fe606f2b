import type { FormatName } from '../render/formats.js';

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

/**
 * One SSE connection. It is `live` once it has been sent every retained element it asked for;
 * from then on the broadcaster writes to it. `lastSentSeq` makes delivery exactly-once at the
 * seam between replay and live, whatever the interleaving of the two.
 */
export class Subscriber {
  live = false;
  lastSentSeq: number;
  #closed = false;

  constructor(
    readonly sink: SubscriberSink,
    readonly format: FormatName,
    lastSentSeq: number,
    /** Bytes that may wait unsent before the subscriber is evicted. */
    readonly maxQueueBytes: number,
  ) {
    this.lastSentSeq = lastSentSeq;
    sink.once('close', () => {
      this.#closed = true;
    });
  }

  get closed(): boolean {
    return this.#closed || this.sink.destroyed;
  }

  /** Whether writing `bytes` more would exceed the queue limit. */
  wouldOverflow(bytes: number): boolean {
    return this.sink.writableLength + bytes > this.maxQueueBytes;
  }

  /** Writes an element's frame; returns false when the sink asks to wait for `drain`. */
  send(frame: Buffer, seq: number): boolean {
    this.lastSentSeq = seq;
    return this.sink.write(frame);
  }

  /** Cuts the connection at once: it can resume by id. */
  evict(): void {
    this.#closed = true;
    this.sink.destroy();
  }

  /** Ends the stream after `farewell` (e.g. a `retry:` hint at shutdown). */
  close(farewell?: string): void {
    // A client gone before the stream ended may leave its socket half open: release it.
    if (this.closed) {
      this.sink.destroy();
      return;
    }
    this.#closed = true;
    this.sink.end(farewell);
  }

  /** Resolves when the sink has drained, or false if it closed first. */
  drained(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
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
}
