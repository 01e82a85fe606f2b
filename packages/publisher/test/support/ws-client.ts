import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocket, type ClientOptions } from 'ws';

/** One server → client message of the data WebSocket: `{type} {argument}\n{body}`. */
export interface WsMessage {
  readonly type: string;
  readonly argument: string | undefined;
  readonly body: string;
  /** The message as received (text). */
  readonly text: string;
}

export interface WsConnection {
  readonly socket: WebSocket;
  readonly messages: WsMessage[];
  /** The `Sec-WebSocket-Extensions` the server answered (empty when none). */
  readonly extensions: string;
  /** Every chunk that came off the socket after the handshake, as sent (frames, compressed or not). */
  readonly wire: Buffer[];
  /** Resolves once `count` messages have arrived in total (rejects if the connection closes first). */
  waitForMessages(count: number): Promise<WsMessage[]>;
  /** Resolves with the close code and reason when the connection closes. */
  readonly closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

export function parseWsMessage(text: string): WsMessage {
  const newline = text.indexOf('\n');
  const head = newline === -1 ? text : text.slice(0, newline);
  const space = head.indexOf(' ');
  return {
    type: space === -1 ? head : head.slice(0, space),
    argument: space === -1 ? undefined : head.slice(space + 1),
    body: newline === -1 ? '' : text.slice(newline + 1),
    text,
  };
}

/** The element ids of `messages`, in order (gaps left out). */
export const wsElementIds = (messages: readonly WsMessage[]) => messages.filter((message) => message.type === 'element').map((message) => message.argument);

/**
 * Opens the data WebSocket with `ws` as a plain client (permessage-deflate offered unless
 * `options.perMessageDeflate` is false) and collects what it receives; rejects with the HTTP
 * status and body when the server refuses the upgrade.
 */
export function openWs(url: string, options: ClientOptions = {}): Promise<WsConnection> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, options);
    const messages: WsMessage[] = [];
    const wire: Buffer[] = [];
    const waiters: Array<() => void> = [];
    let isClosed = false;
    let extensions = '';
    socket.on('upgrade', (response: IncomingMessage) => {
      extensions = String(response.headers['sec-websocket-extensions'] ?? '');
    });
    const closed = new Promise<{ code: number; reason: string }>((resolveClose) => {
      socket.on('close', (code, reason) => {
        isClosed = true;
        for (const wake of waiters.splice(0)) wake();
        resolveClose({ code, reason: reason.toString() });
      });
    });
    socket.on('message', (data, isBinary) => {
      if (isBinary) throw new Error('the server sent a binary message');
      messages.push(parseWsMessage((data as Buffer).toString('utf8')));
      for (const wake of waiters.splice(0)) wake();
    });
    socket.on('unexpected-response', (_request, response: IncomingMessage) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => reject(new UpgradeRefused(response.statusCode ?? 0, response.headers, body)));
    });
    socket.on('error', (error) => reject(error));
    socket.on('open', () => {
      // The bytes as they came off the wire, beside ws' own reader.
      (socket as unknown as { _socket: Socket })._socket.on('data', (chunk: Buffer) => void wire.push(chunk));
      resolve({
        socket,
        messages,
        extensions,
        wire,
        closed,
        waitForMessages: (count) =>
          new Promise((resolveWait, rejectWait) => {
            const check = () => {
              if (messages.length >= count) resolveWait(messages.slice(0, count));
              else if (isClosed) rejectWait(new Error(`closed after ${messages.length} of ${count} messages`));
              else waiters.push(check);
            };
            check();
          }),
        close: () => socket.close(),
      });
    });
  });
}

/** The server answered the upgrade with an HTTP status (a problem+json body). */
export class UpgradeRefused extends Error {
  constructor(
    readonly status: number,
    readonly headers: IncomingMessage['headers'],
    readonly body: string,
  ) {
    super(`upgrade refused with ${status}`);
  }

  get problem(): { code: string; status: number } {
    return JSON.parse(this.body) as { code: string; status: number };
  }
}
