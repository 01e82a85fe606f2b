/**
 * What the WebSocket transport needs of a connection, whichever implementation runs it: the
 * WHATWG `WebSocket` of browsers and Node ≥ 22, or the `ws` package on Node 20 (see
 * `open-web-socket.ts`, which the package's `#open-web-socket` import picks per platform).
 */

/** How a connection ended. Called once, last. */
export interface WebSocketEnd {
  /** The close code received, 1006 when the connection ended without a close frame or never opened. */
  readonly code: number;
  readonly reason: string;
  /** Whether the connection had opened (101 received) before it ended. */
  readonly opened: boolean;
  /** The server's answer to the upgrade when it refused it and the implementation can read it (`ws` can; browsers cannot). */
  readonly answer?: Response;
  /** The error behind a connection that ended without a close frame, if the implementation gives one (with a system code in Node). */
  readonly error?: unknown;
}

export interface WebSocketListener {
  opened(): void;
  /** A data message: its text, or null for a binary message. */
  message(text: string | null): void;
  ended(end: WebSocketEnd): void;
}

export interface WebSocketConnection {
  /** Closes the connection (a close frame when open; the handshake is abandoned when not). `ended` follows. */
  close(code?: number, reason?: string): void;
  /** Stops reading from the socket (TCP backpressure) until `resume()`; absent where the implementation cannot (browsers). */
  readonly pause?: () => void;
  readonly resume?: () => void;
}

/** Opens a connection to `url` (ws: or wss:) and reports to `listener`. */
export type OpenWebSocket = (url: string, listener: WebSocketListener) => WebSocketConnection;

/** The part of the WHATWG `WebSocket` class used here (the library compiles without the DOM's types). */
interface WhatwgWebSocket {
  binaryType: string;
  addEventListener(type: 'open' | 'error', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { readonly data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (event: { readonly code: number; readonly reason: string }) => void): void;
  close(code?: number, reason?: string): void;
}
export type WhatwgWebSocketClass = new (url: string) => WhatwgWebSocket;

/** The global `WebSocket` class, where the platform has one (browsers, Node ≥ 22). */
export const globalWebSocket = (globalThis as { WebSocket?: WhatwgWebSocketClass }).WebSocket;

/** A connection over a WHATWG `WebSocket`: no status of a refused upgrade, no pause. */
export function openWhatwgWebSocket(WebSocketClass: WhatwgWebSocketClass): OpenWebSocket {
  return (url, listener) => {
    const socket = new WebSocketClass(url);
    socket.binaryType = 'arraybuffer';
    let opened = false;
    socket.addEventListener('open', () => {
      opened = true;
      listener.opened();
    });
    socket.addEventListener('message', (event) => listener.message(typeof event.data === 'string' ? event.data : null));
    socket.addEventListener('close', (event) => listener.ended({ code: event.code, reason: event.reason, opened }));
    return { close: (code, reason) => socket.close(code, reason) };
  };
}
