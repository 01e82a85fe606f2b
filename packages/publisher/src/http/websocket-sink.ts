import type { Socket } from 'node:net';
import { WebSocket } from 'ws';
import type { EvictionReason } from '../publish/sse/guarded-sink.js';
import type { WebSocketSink } from '../publish/sse/websocket-subscriber.js';
import { WS_CLIENT_MESSAGE, webSocketCloseCodes } from '@rdf-stream/protocol';
import type { PublisherConfig } from '../config/config-schema.js';
import { shedRetryMs, shutdownRetryMs } from './sse-headers-and-retries.js';

/**
 * The rules every publisher WebSocket (the data WebSocket, a notification channel) keeps before
 * and while it is served: the client sends no data message (closed 1008 at the first one;
 * attach at once, so that one arriving during later asynchronous work is not missed).
 */
export function refuseClientMessages(socket: WebSocket): void {
  socket.on('message', () => socket.close(webSocketCloseCodes.clientMessage, WS_CLIENT_MESSAGE));
}

/** Turned away at shutdown: close 1012 with when to come back (`shutdownRetryMs`). */
export function closeForShutdown(socket: WebSocket, config: Pick<PublisherConfig, 'sseRetryMs' | 'shutdownRetryJitterMs'>): void {
  socket.close(webSocketCloseCodes.shutdown, JSON.stringify({ retryMs: shutdownRetryMs(config)() }));
}

/** Shed: close 1013 with when to come back, spread as a shed EventSource's `retry:` (`shedRetryMs`). */
export function closeShed(socket: WebSocket, sseRetryMs: number, maxDelayMs: number): void {
  const retryMs = shedRetryMs(sseRetryMs, maxDelayMs);
  socket.close(webSocketCloseCodes.overloaded, JSON.stringify({ code: 'PUB_ERR_OVERLOADED', retryMs }));
}

/** The largest window a shared compressed frame may need (`zlib`'s default, 2¹⁵ bytes). */
const SHARED_DEFLATE_WINDOW_BITS = 15;

/**
 * A `ws` WebSocket whose handshake is done, as the publishing core writes to it: shared frames
 * go straight to its socket (`net.Socket.write` of ready bytes, as `EventStreamSink` does for
 * SSE), never through `ws.send()`. `ws` keeps its receiver (pongs, the client's close frame,
 * `maxPayload`) and writes its own control frames — pongs, the close frame — each as one
 * synchronous write of a whole frame: it queues a frame only while it compresses a message of
 * its own (`ws.send` with compression), which is never called, so none of its frames can land
 * inside one of ours.
 */
export class WebSocketConnection implements WebSocketSink {
  readonly compressed: boolean;
  readonly #ws: WebSocket;
  readonly #socket: Socket;

  constructor(ws: WebSocket) {
    this.#ws = ws;
    // ws' connection socket: public in all but name (`_socket`, what `bufferedAmount` reads).
    this.#socket = (ws as unknown as { _socket: Socket })._socket;
    this.compressed = takesSharedDeflate(ws);
  }

  /** The TCP connection, whose acknowledged bytes the process's progress monitor watches. */
  get socket(): Socket {
    return this.#socket;
  }

  get writableLength(): number {
    return this.#socket.writableLength;
  }

  /** Closed, or closing: no data frame may follow a close frame. */
  get destroyed(): boolean {
    return this.#ws.readyState !== WebSocket.OPEN || this.#socket.destroyed;
  }

  write(chunk: Buffer | string): boolean {
    return this.#socket.write(chunk);
  }

  /** A normal closure (1000); the publisher's own closes say why (`closeWith`). */
  end(): void {
    this.closeWith(1000, '');
  }

  /** Cuts the connection at once, unless its closing handshake runs (then `ws`' close timeout ends it). */
  destroy(): void {
    if (this.#ws.readyState !== WebSocket.CLOSING) this.#ws.terminate();
  }

  /**
   * Evicted: close 4008 `{"code":"evicted","reason":…}`, ended at the close timeout if the client
   * does not answer. (A reader that stopped reading is reset by `GuardedSink` instead.)
   */
  cut(reason: EvictionReason): void {
    this.closeWith(webSocketCloseCodes.evicted, JSON.stringify({ code: 'evicted', reason }));
  }

  closeWith(code: number, reason: string): void {
    if (this.#ws.readyState === WebSocket.OPEN) this.#ws.close(code, reason);
  }

  onPong(listener: () => void): void {
    this.#ws.on('pong', listener);
  }

  /** After each pong `ws` writes on its own, answering the client's ping (it emits `ping` after writing it). */
  onOwnWrite(listener: () => void): void {
    this.#ws.on('ping', listener);
  }

  once(event: 'drain' | 'close', listener: () => void): void {
    if (event === 'drain') this.#socket.once('drain', listener);
    else this.#ws.once('close', listener);
  }

  off(event: 'drain' | 'close', listener: () => void): void {
    if (event === 'drain') this.#socket.off('drain', listener);
    else this.#ws.off('close', listener);
  }
}

/**
 * Whether `ws` negotiated permessage-deflate in a form the shared compressed frames fit: without
 * context takeover (the publisher forces it), and a window as large as the one they were
 * compressed with. A client that asked for a smaller `server_max_window_bits` is sent
 * uncompressed frames, which permessage-deflate allows (RSV1 clear).
 */
function takesSharedDeflate(ws: WebSocket): boolean {
  const extensions = (ws as unknown as { _extensions: Record<string, { params?: Record<string, unknown> } | undefined> })._extensions;
  const params = extensions['permessage-deflate']?.params;
  if (params === undefined || params.server_no_context_takeover !== true) return false;
  const windowBits = params.server_max_window_bits;
  return windowBits === undefined || windowBits === true || windowBits === SHARED_DEFLATE_WINDOW_BITS;
}
