/**
 * One WebSocket subscriber of the fleet (`/streams/{id}/ws`, docs/protocol.md): the opening
 * handshake and RFC 6455's framing over a bare `net.Socket` (websocket-frames.ts), the wire
 * protocol's messages (`element {id}\n<document>`, `gap\n<json>`), the close codes' advice
 * (reconnect after `retryMs`, resume with `lastEventId`, or stop), and the client library's
 * backoff. A `ws` client per connection costs an http.ClientRequest for the handshake, its
 * Receiver and Sender streams and an EventEmitter per socket; ten thousand of them share two
 * cores and the publisher's memory budget with it (see the bench's README for the measurement).
 */
import { connect, type Socket } from 'node:net';
import { plannedPortTaken, type SourceEndpoint } from './source-endpoint.js';
import { backoffDelay, type BackoffOptions, type TransportStats } from '@rdf-stream/client';
import { answerCause, countError, countFailure, type Fleet } from './polling-client.js';
import type { FleetClient } from './update-recorder.js';
import { closeFrame, clientFrame, FrameReader, handshakeKey, OPCODE } from './websocket-frames.js';

export interface WebSocketClientOptions {
  /** The stream's WebSocket URL, with `?format=`; `lastEventId` is added when resuming. */
  readonly url: URL;
  /** Where its connections come from, or undefined to let the kernel choose (one address: no `bind()`). */
  readonly source: SourceEndpoint | undefined;
  readonly backoff: BackoffOptions;
  /** Largest message accepted (bytes), as the client library's largest SSE event. */
  readonly maxMessageBytes: number;
  readonly stats: TransportStats;
}

/** The longest HTTP answer to the handshake read before giving up (bytes): a status line and a few headers. */
export const MAX_HANDSHAKE_BYTES = 16 * 1024;

/** What a close code tells the client to do (WS-PROTOCOL: 1001 ended, 1008/1009 refused; others resume). */
export function afterClose(code: number, reason: string): { reconnect: boolean; floorMs: number } {
  if (code === 1001 || code === 1008 || code === 1009) return { reconnect: false, floorMs: 0 };
  let floorMs = 0;
  if (reason.startsWith('{')) {
    try {
      const retryMs = (JSON.parse(reason) as { retryMs?: unknown }).retryMs;
      if (typeof retryMs === 'number' && retryMs >= 0) floorMs = retryMs;
    } catch {
      // A reason that is not JSON carries no delay.
    }
  }
  return { reconnect: true, floorMs };
}

/**
 * Subscribes until the fleet stops or the server says not to come back; records every element
 * into `fleet.updates` at the moment its frame was read. Resolves when done.
 */
export function websocketClient(fleet: Fleet, client: FleetClient, options: WebSocketClientOptions, onSocket: (socket: Socket) => void): Promise<void> {
  const { url, stats } = options;
  const port = Number(url.port || 80);
  let lastEventId: string | undefined;
  let attempt = 0;
  return new Promise((resolve) => {
    const open = () => {
      if (fleet.stopping) {
        resolve();
        return;
      }
      const { key, accept } = handshakeKey();
      const path = `${url.pathname}${url.search}${lastEventId === undefined ? '' : `${url.search ? '&' : '?'}lastEventId=${lastEventId}`}`;
      const from = options.source?.take();
      const socket = connect({ host: url.hostname, port, ...from });
      onSocket(socket);
      stats.requests++;
      let upgraded = false;
      let handshake = '';
      let closed: { code: number; reason: string } | undefined;
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        if (upgraded) fleet.counters.connected--;
        socket.destroy();
        const advice = closed === undefined ? { reconnect: true, floorMs: 0 } : afterClose(closed.code, closed.reason);
        if (fleet.stopping || !advice.reconnect) {
          resolve();
          return;
        }
        stats.reconnects++;
        setTimeout(open, backoffDelay(attempt++, options.backoff, advice.floorMs));
      };
      const reader = new FrameReader(
        {
          onMessage: (opcode, payload) => {
            const receivedAt = Date.now();
            if (opcode !== OPCODE.text) return;
            const text = payload.toString('utf8');
            const newline = text.indexOf('\n');
            const head = newline < 0 ? text : text.slice(0, newline);
            if (!head.startsWith('element ')) return; // a gap: the elements from the oldest retained follow
            lastEventId = head.slice('element '.length);
            attempt = 0;
            stats.elements++;
            fleet.updates.record(client, text.slice(newline + 1), receivedAt);
          },
          onPing: (payload) => socket.write(clientFrame(OPCODE.pong, payload.subarray(0, 125))),
          onClose: (code, reason) => {
            closed = { code, reason };
            socket.end(closeFrame(code === 1005 ? 1000 : code));
          },
          onProtocolError: (message) => {
            countFailure(fleet, new Error(message));
            end();
          },
        },
        options.maxMessageBytes,
      );
      socket.on('data', (chunk: Buffer) => {
        if (upgraded) {
          reader.push(chunk);
          return;
        }
        handshake += chunk.toString('latin1');
        const headerEnd = handshake.indexOf('\r\n\r\n');
        if (headerEnd < 0) {
          if (handshake.length > MAX_HANDSHAKE_BYTES) end();
          return;
        }
        const head = handshake.slice(0, headerEnd);
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
        if (status !== 101 || !new RegExp(`^sec-websocket-accept: *${accept.replace(/[+/=]/g, '\\$&')} *$`, 'im').test(head)) {
          // A refusal (404, 400, 403) or an answer that is not this handshake's: counted, never retried.
          countError(fleet, status === 101 ? 'WebSocket accept mismatch' : answerCause(status));
          closed = { code: 1008, reason: `HTTP ${status}` };
          end();
          return;
        }
        upgraded = true;
        fleet.counters.connected++;
        client.connectedAt ??= Date.now();
        const rest = Buffer.from(handshake.slice(headerEnd + 4), 'latin1');
        handshake = '';
        if (rest.length > 0) reader.push(rest);
      });
      socket.on('error', (error) => {
        // A planned port taken since the plan: connected again from another, not an error of the publisher's.
        if (!upgraded && plannedPortTaken(error, from)) {
          ended = true;
          socket.destroy();
          open();
          return;
        }
        countFailure(fleet, error);
        end();
      });
      socket.on('close', () => end());
      socket.once('connect', () => {
        socket.setNoDelay(true);
        socket.write(
          `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
      });
    };
    open();
  });
}
