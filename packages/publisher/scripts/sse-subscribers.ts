/**
 * A child process holding `count` SSE connections (node:http + eventsource-parser); reports counts
 * over IPC. With `gzip`, it asks for `Accept-Encoding: gzip` and decodes what comes (a DEFLATE
 * fragment per event); `bodyBytes` counts the body as it came off the wire (compressed, if it was).
 */
import { Agent, type ClientRequest, request } from 'node:http';
import { createGunzip } from 'node:zlib';
import { createParser } from 'eventsource-parser';

type Message = { readonly url: string; readonly count: number; readonly gzip?: boolean } | 'report' | 'close-all';

let events = 0;
let errors = 0;
let closed = 0;
let bodyBytes = 0;
let encoded = 0;
/** Bumped by `close-all`: what the connections it closed still report is not counted. */
let generation = 0;
const requests = new Set<ClientRequest>();

process.on('message', (message: Message) => {
  if (message === 'report') {
    process.send?.({ events, errors, closed, bodyBytes, encoded });
    return;
  }
  if (message === 'close-all') {
    generation++;
    for (const req of requests) req.destroy();
    requests.clear();
    events = errors = closed = bodyBytes = encoded = 0;
    process.send?.('closed');
    return;
  }
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  let connected = 0;
  const lanes = 50;
  const perLane = Math.ceil(message.count / lanes);
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (message.gzip) headers['accept-encoding'] = 'gzip';
  const current = generation;
  const counted = () => current === generation;
  const open = (index: number, end: number) => {
    if (index >= end || !counted()) return;
    const req = request(message.url, { agent, headers });
    requests.add(req);
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
      if (++connected === message.count) process.send?.('connected');
      open(index + 1, end);
    });
    req.on('error', () => {
      if (!counted()) return;
      errors++;
      open(index + 1, end);
    });
    req.end();
  };
  // A few connections at a time: a ramp rather than a SYN flood.
  for (let lane = 0; lane < lanes; lane++) open(lane * perLane, Math.min((lane + 1) * perLane, message.count));
});
