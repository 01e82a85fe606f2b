/** A child process holding `count` SSE connections (node:http + eventsource-parser); reports counts over IPC. */
import { Agent, request } from 'node:http';
import { createParser } from 'eventsource-parser';

let events = 0;
let errors = 0;
let closed = 0;

process.on('message', (message: { url: string; count: number } | 'report') => {
  if (message === 'report') {
    process.send?.({ events, errors, closed });
    return;
  }
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  let connected = 0;
  const lanes = 50;
  const perLane = Math.ceil(message.count / lanes);
  const open = (index: number, end: number) => {
    if (index >= end) return;
    const req = request(message.url, { agent, headers: { accept: 'text/event-stream' } });
    req.on('response', (response) => {
      const parser = createParser({ onEvent: () => void events++ });
      response.setEncoding('utf8').on('data', (chunk: string) => parser.feed(chunk));
      response.on('close', () => void closed++);
      if (++connected === message.count) process.send?.('connected');
      open(index + 1, end);
    });
    req.on('error', () => {
      errors++;
      open(index + 1, end);
    });
    req.end();
  };
  // A few connections at a time: a ramp rather than a SYN flood.
  for (let lane = 0; lane < lanes; lane++) open(lane * perLane, Math.min((lane + 1) * perLane, message.count));
});
