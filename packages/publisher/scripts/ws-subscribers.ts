/**
 * A child process holding `count` data WebSocket connections (`ws` as a plain client); reports
 * counts over IPC, as `sse-subscribers.ts` does for SSE. With `deflate`, it offers
 * permessage-deflate and decodes what comes; `bodyBytes` counts what came off each socket after
 * the handshake (frames, compressed if they were, pings included); `encoded` the connections
 * that negotiated compression.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocket } from 'ws';

type Message = { readonly url: string; readonly count: number; readonly deflate?: boolean } | 'report' | 'close-all';

let events = 0;
let errors = 0;
let closed = 0;
let bodyBytes = 0;
let encoded = 0;
/** Bumped by `close-all`: what the connections it closed still report is not counted. */
let generation = 0;
const sockets = new Set<WebSocket>();

process.on('message', (message: Message) => {
  if (message === 'report') {
    process.send?.({ events, errors, closed, bodyBytes, encoded });
    return;
  }
  if (message === 'close-all') {
    generation++;
    for (const socket of sockets) socket.terminate();
    sockets.clear();
    events = errors = closed = bodyBytes = encoded = 0;
    process.send?.('closed');
    return;
  }
  let connected = 0;
  const lanes = 50;
  const perLane = Math.ceil(message.count / lanes);
  const current = generation;
  const counted = () => current === generation;
  const open = (index: number, end: number) => {
    if (index >= end || !counted()) return;
    const socket = new WebSocket(message.url, { perMessageDeflate: message.deflate === true });
    sockets.add(socket);
    let opened = false;
    socket.on('upgrade', (response: IncomingMessage) => {
      if (counted() && /permessage-deflate/.test(String(response.headers['sec-websocket-extensions'] ?? ''))) encoded++;
    });
    socket.on('open', () => {
      opened = true;
      (socket as unknown as { _socket: Socket })._socket.on('data', (chunk: Buffer) => void (counted() && (bodyBytes += chunk.length)));
      if (++connected === message.count) process.send?.('connected');
      open(index + 1, end);
    });
    socket.on('message', () => void (counted() && events++));
    socket.on('close', () => void (counted() && closed++));
    socket.on('error', () => {
      if (!counted()) return;
      errors++;
      if (!opened) open(index + 1, end);
    });
  };
  // A few connections at a time: a ramp rather than a SYN flood.
  for (let lane = 0; lane < lanes; lane++) open(lane * perLane, Math.min((lane + 1) * perLane, message.count));
});
