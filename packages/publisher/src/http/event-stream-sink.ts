import type { ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { SubscriberSink } from '../publish/sse/subscriber.js';
import { EventStreamEncoder, type SseEncoding } from '../render/event-stream-encoder.js';

/**
 * Where an event stream whose head is sent is written, and how it is framed: straight to its
 * socket, framed once per shared frame by the encoder (`EventStreamSink`), when the response
 * has a real socket; otherwise through the response itself (an injected request in tests, a
 * custom server), which frames its body.
 */
export function eventStreamOutput(response: ServerResponse, encoding: SseEncoding): { sink: SubscriberSink; encoder: EventStreamEncoder } {
  if (response.socket instanceof Socket) {
    return { sink: new EventStreamSink(response), encoder: new EventStreamEncoder(encoding, response.chunkedEncoding) };
  }
  return { sink: response, encoder: new EventStreamEncoder(encoding) };
}

/**
 * An event stream's connection as a subscriber writes to it: the socket of a response whose head
 * is sent. What is written is already framed for the wire (`EventStreamEncoder` with `chunked`
 * as the response decided), so each event is one `socket.write` of shared bytes, without the
 * response's per-write chunking (a cork, four writes, an uncork on the next tick and a writev
 * per subscriber). The stream is the connection's last response: its end closes the connection.
 */
export class EventStreamSink implements SubscriberSink {
  readonly #socket: Socket;

  constructor(response: ServerResponse) {
    if (!response.headersSent) throw new Error('the response head must be sent before its socket is written to');
    const { socket } = response;
    if (socket === null) throw new Error('the response has no socket');
    this.#socket = socket;
  }

  /** The connection: what its client acknowledged is watched, and it is reset when cut. */
  get socket(): Socket {
    return this.#socket;
  }

  get writableLength(): number {
    return this.#socket.writableLength;
  }

  get destroyed(): boolean {
    return this.#socket.destroyed;
  }

  write(chunk: Buffer | string): boolean {
    return this.#socket.write(chunk);
  }

  end(chunk?: Buffer | string): void {
    if (chunk === undefined) this.#socket.end();
    else this.#socket.end(chunk);
  }

  destroy(): void {
    this.#socket.destroy();
  }

  once(event: 'drain' | 'close', listener: () => void): void {
    this.#socket.once(event, listener);
  }

  off(event: 'drain' | 'close', listener: () => void): void {
    this.#socket.off(event, listener);
  }
}
