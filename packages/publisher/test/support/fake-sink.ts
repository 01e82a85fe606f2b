import { EventEmitter } from 'node:events';
import type { SubscriberSink } from '../../src/publish/sse/subscriber.js';

/**
 * A subscriber's socket, in memory. A reading sink consumes writes at once; a stalled one
 * queues them (its `writableLength` grows) until `drain()` is called, as a slow client would.
 */
export class FakeSink extends EventEmitter implements SubscriberSink {
  readonly received: string[] = [];
  /** Every chunk written, as bytes (what a gzip subscriber receives is not text). */
  readonly written: Buffer[] = [];
  writableLength = 0;
  destroyed = false;
  ended = false;
  #pending: string[] = [];

  constructor(
    public reading = true,
    readonly highWaterMark = 16 * 1024,
  ) {
    super();
  }

  write(chunk: Buffer | string): boolean {
    if (this.destroyed || this.ended) throw new Error('write after end');
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    this.written.push(bytes);
    const text = chunk.toString();
    if (this.reading) {
      this.received.push(text);
      return true;
    }
    this.#pending.push(text);
    this.writableLength += bytes.length;
    return this.writableLength < this.highWaterMark;
  }

  /** The client reads everything queued. */
  drain(): void {
    this.received.push(...this.#pending);
    this.#pending = [];
    this.writableLength = 0;
    this.reading = true;
    this.emit('drain');
  }

  end(chunk?: Buffer | string): void {
    if (chunk !== undefined) this.write(chunk);
    this.ended = true;
    this.emit('close');
  }

  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }

  /** Ids of the element frames received, in order. */
  ids(): number[] {
    return this.received.flatMap((text) => [...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1])));
  }
}
