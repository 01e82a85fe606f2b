/**
 * A child process holding `count` subscriber connections, reporting counts over IPC:
 *
 * - `sse`: event streams over node:http + eventsource-parser. With `compress`, it asks for
 *   `Accept-Encoding: gzip` and decodes what comes (a DEFLATE fragment per event); `bodyBytes`
 *   counts the body as it came off the wire (compressed, if it was).
 * - `ws`: data WebSockets (`ws` as a plain client). With `compress`, it offers permessage-deflate
 *   and decodes what comes; `bodyBytes` counts what came off each socket after the handshake
 *   (frames, compressed if they were, pings included).
 *
 * `encoded` counts the connections whose stream came compressed (gzip, or permessage-deflate
 * negotiated).
 */
import { Agent, type IncomingMessage, request } from 'node:http';
import type { Socket } from 'node:net';
import { createGunzip } from 'node:zlib';
import { createParser } from 'eventsource-parser';
import { WebSocket } from 'ws';

export type SubscriberTransport = 'sse' | 'ws';
export type SubscriberFleetMessage =
  | { readonly url: string; readonly count: number; readonly transport: SubscriberTransport; readonly compress?: boolean }
  | 'report'
  | 'close-all';
export interface SubscriberFleetReport {
  readonly events: number;
  readonly errors: number;
  readonly closed: number;
  readonly bodyBytes: number;
  readonly encoded: number;
}

/** Connections opened at once, each lane opening its next when one is open: a ramp rather than a SYN flood. */
const LANES = 50;

let events = 0;
let errors = 0;
let closed = 0;
let bodyBytes = 0;
let encoded = 0;
/** Bumped by `close-all`: what the connections it closed still report is not counted. */
let generation = 0;
/** How to close each open connection. */
const closers = new Set<() => void>();

/** What one connection reports, each call counted only while its generation is current. */
interface Connection {
  /** The connection is open: the lane may open its next. */
  readonly opened: () => void;
  /** It failed; before it opened, the lane goes on to its next. */
  readonly failed: () => void;
  readonly counted: () => boolean;
}

function openSse(url: string, compress: boolean, agent: Agent, connection: Connection): void {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (compress) headers['accept-encoding'] = 'gzip';
  const { counted } = connection;
  const req = request(url, { agent, headers });
  closers.add(() => req.destroy());
  req.on('response', (response) => {
    const parser = createParser({ onEvent: () => void (counted() && events++) });
    response.on('data', (chunk: Buffer) => void (counted() && (bodyBytes += chunk.length)));
    const gzipped = response.headers['content-encoding'] === 'gzip';
    if (gzipped) encoded++;
    const body = gzipped ? response.pipe(createGunzip()) : response;
    const decoder = new TextDecoder();
    body.on('data', (bytes: Buffer) => parser.feed(decoder.decode(bytes, { stream: true })));
    body.on('error', () => void (counted() && errors++));
    response.on('close', () => void (counted() && closed++));
    connection.opened();
  });
  req.on('error', connection.failed);
  req.end();
}

function openWebSocket(url: string, compress: boolean, connection: Connection): void {
  const { counted } = connection;
  const socket = new WebSocket(url, { perMessageDeflate: compress });
  closers.add(() => socket.terminate());
  socket.on('upgrade', (response: IncomingMessage) => {
    if (counted() && /permessage-deflate/.test(String(response.headers['sec-websocket-extensions'] ?? ''))) encoded++;
  });
  socket.on('open', () => {
    (socket as unknown as { _socket: Socket })._socket.on('data', (chunk: Buffer) => void (counted() && (bodyBytes += chunk.length)));
    connection.opened();
  });
  socket.on('message', () => void (counted() && events++));
  socket.on('close', () => void (counted() && closed++));
  socket.on('error', connection.failed);
}

/** Opens `count` connections over `LANES` lanes; says `connected` once all are open. */
function openAll(message: Exclude<SubscriberFleetMessage, string>): void {
  const { url, count, transport, compress = false } = message;
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  let connected = 0;
  const perLane = Math.ceil(count / LANES);
  const current = generation;
  const counted = () => current === generation;
  const open = (index: number, end: number) => {
    if (index >= end || !counted()) return;
    let opened = false;
    const connection: Connection = {
      counted,
      opened: () => {
        opened = true;
        if (++connected === count) process.send?.('connected');
        open(index + 1, end);
      },
      failed: () => {
        if (!counted()) return;
        errors++;
        if (!opened) open(index + 1, end);
      },
    };
    if (transport === 'sse') openSse(url, compress, agent, connection);
    else openWebSocket(url, compress, connection);
  };
  for (let lane = 0; lane < LANES; lane++) open(lane * perLane, Math.min((lane + 1) * perLane, count));
}

process.on('message', (message: SubscriberFleetMessage) => {
  if (message === 'report') {
    process.send?.({ events, errors, closed, bodyBytes, encoded } satisfies SubscriberFleetReport);
    return;
  }
  if (message === 'close-all') {
    generation++;
    for (const close of closers) close();
    closers.clear();
    events = errors = closed = bodyBytes = encoded = 0;
    process.send?.('closed');
    return;
  }
  openAll(message);
});
