import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The connections that have not begun a request. Node counts such a connection as waiting for
 * its first request's headers, not as idle: neither `server.close()` nor
 * `closeIdleConnections()` ends it, so a browser's speculative pre-connection (or an HTTP
 * client's spare one) held a graceful shutdown until `headersTimeoutMs`, past the shutdown's own
 * budget. Nothing is owed to them: `closeAll()` ends them when the server begins to close.
 *
 * At most one entry per open connection (a connection leaves the set with its first request, or
 * when it closes); the server's `maxConnections` and the process's open-files limit bound both.
 */
export class UnusedConnections {
  readonly #sockets = new Set<Socket>();
  #closing = false;

  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      // Accepted while closing: a request on it would be refused anyway.
      if (this.#closing) {
        socket.destroy();
        return;
      }
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    server.prependListener('request', (request: IncomingMessage) => this.#sockets.delete(request.socket));
    // A WebSocket handshake is a request too, whose connection then belongs to the WebSocket.
    server.prependListener('upgrade', (request: IncomingMessage) => this.#sockets.delete(request.socket));
  }

  /** Takes `socket` for one that has begun a request: its first was read without Node's parser (`DirectLatestRequests`). */
  begun(socket: Socket): void {
    this.#sockets.delete(socket);
  }

  /** Connections open that have not begun a request. */
  get size(): number {
    return this.#sockets.size;
  }

  /** Ends every connection that has not begun a request, and each one accepted from now on; returns how many it ended. */
  closeAll(): number {
    this.#closing = true;
    const ended = this.#sockets.size;
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    return ended;
  }
}
