import { describe, expect, it } from 'vitest';
import type { TransportEvent } from '../../../src/transport/transport-event.js';
import { emptyStats } from '../../../src/transport/transport-stats.js';
import { WebSocketSession } from '../../../src/transport/web-socket-session.js';

const WS_URL = 'http://publisher.test/streams/s/ws';

/** A session without jitter (backoff at its ceiling), and what it emitted. */
function session(options: { lastEventId?: string; maxEventBytes?: number } = {}) {
  const events: TransportEvent[] = [];
  const stats = emptyStats();
  const ws = new WebSocketSession(
    { format: 'trig', backoff: { initialDelayMs: 100, maxDelayMs: 1_000, random: () => 1 }, maxEventBytes: options.maxEventBytes ?? 1_000, stats, ...options },
    (event) => events.push(event),
  );
  return { ws, events, stats };
}

describe('WebSocketSession', () => {
  it('connects with the format and resumes after the last id received, across connections', () => {
    const { ws, stats } = session({ lastEventId: 'e-3' });
    expect(ws.connecting(WS_URL)).toBe('ws://publisher.test/streams/s/ws?format=trig&lastEventId=e-3');
    ws.received('element e-4\n<a> <b> <c> .', 1_000);
    expect(ws.lastEventId).toBe('e-4');
    expect(ws.closed(1006, '')).toEqual({ kind: 'reconnect' });
    ws.reconnect();
    expect(ws.connecting('https://publisher.test/streams/s/ws')).toBe('wss://publisher.test/streams/s/ws?format=trig&lastEventId=e-4');
    expect(stats).toMatchObject({ requests: 2, elements: 1, reconnects: 1 });
  });

  it('connects without lastEventId when it has none', () => {
    expect(session().ws.connecting(WS_URL)).toBe('ws://publisher.test/streams/s/ws?format=trig');
  });

  it('emits elements with their id, body (newlines kept) and arrival time, and gaps with sequence numbers', () => {
    const { ws, events } = session();
    ws.connecting(WS_URL);
    expect(ws.received('element ep-7\n<g> {\n<a> <b> <c> .\n}\n', 20)).toBe(true);
    expect(ws.received('gap\n{"requestedId":"ep-2","oldestRetained":"ep-5","reason":"expired"}', 30)).toBe(true);
    expect(ws.received('gap\n{"requestedId":"old-2","oldestRetained":"ep-1","reason":"epoch"}', 40)).toBe(true);
    expect(events).toEqual([
      { type: 'element', text: '<g> {\n<a> <b> <c> .\n}\n', format: 'trig', receivedAt: 20, id: 'ep-7' },
      { type: 'gap', afterSeq: 2, resumedAtSeq: 5, reason: 'expired' },
      { type: 'gap', afterSeq: undefined, resumedAtSeq: 1, reason: 'epoch' },
    ]);
  });

  it.each([
    ['a binary message', null, 'binary message'],
    ['a message beyond maxEventBytes', `element e-1\n${'x'.repeat(1_000)}`, 'message larger than 1000 bytes'],
    ['a message of no known type', 'hello world\n', 'unknown message "hello world"'],
    ['an element without id', 'element\n<a> <b> <c> .', 'unknown message "element"'],
  ])('drops the connection on %s, says why, and reconnects with backoff', (_case, message, reason) => {
    const { ws, events } = session();
    ws.connecting(WS_URL);
    expect(ws.received(message, 0)).toBe(false);
    expect(ws.received('element e-2\nlate', 0)).toBe(false);
    expect(events).toEqual([]);
    expect(ws.closed(1000, '')).toEqual({ kind: 'reconnect' });
    expect(ws.reconnect('connection closed')).toBe(100);
    expect(ws.reason).toBe(reason);
  });

  it('reconnects after the retryMs of a shutdown (1012) or a shed (1013), exactly', () => {
    const { ws } = session();
    ws.connecting(WS_URL);
    expect(ws.closed(1012, '{"retryMs":2345}')).toEqual({ kind: 'reconnect' });
    expect(ws.reconnect()).toBe(2_345);
    expect(ws.reason).toBe('the server is restarting');
    ws.connecting(WS_URL);
    expect(ws.closed(1013, '{"code":"PUB_ERR_OVERLOADED","retryMs":700}')).toEqual({ kind: 'reconnect' });
    expect(ws.reconnect()).toBe(700);
    expect(ws.reason).toBe('shed by the server');
    // The delay was for that close only.
    ws.connecting(WS_URL);
    expect(ws.closed(1006, '')).toEqual({ kind: 'reconnect' });
    expect(ws.reconnect()).toBe(100);
  });

  it('backs off while connections bring nothing (eviction, loss, a 1001 without stream-ended), from zero again after an element', () => {
    const { ws } = session();
    ws.connecting(WS_URL);
    expect(ws.closed(4008, '{"code":"evicted","reason":"stall"}')).toEqual({ kind: 'reconnect' });
    expect(ws.reconnect()).toBe(100);
    expect(ws.reason).toBe('evicted by the server (stall)');
    ws.connecting(WS_URL);
    expect(ws.closed(1001, '')).toEqual({ kind: 'reconnect' });
    expect(ws.reconnect()).toBe(200);
    ws.connecting(WS_URL);
    expect(ws.closed(1006, '')).toEqual({ kind: 'reconnect' });
    expect(ws.reconnect()).toBe(400);
    expect(ws.reason).toBe('connection lost');
    ws.connecting(WS_URL);
    ws.received('element e-1\nx', 0);
    ws.closed(1006, '');
    expect(ws.reconnect()).toBe(100);
  });

  it('ends on stream-ended, and is refused for good on a policy violation or a frame too big', () => {
    const { ws } = session();
    ws.connecting(WS_URL);
    expect(ws.closed(1001, '{"code":"stream-ended"}')).toEqual({ kind: 'ended' });
    expect(ws.closed(1008, 'PUB_ERR_WS_CLIENT_MESSAGE')).toEqual({ kind: 'refused', code: 1008, reason: 'PUB_ERR_WS_CLIENT_MESSAGE' });
    expect(ws.closed(1009, '')).toEqual({ kind: 'refused', code: 1009, reason: '' });
  });

  it('reads a refused upgrade as the other transports read an answer: 4xx for good, 5xx after Retry-After', () => {
    const { ws } = session();
    ws.connecting(WS_URL);
    expect(ws.answered(404, undefined)).toEqual({ kind: 'refused' });
    expect(ws.answered(503, '2')).toEqual({ kind: 'retry', reason: 'HTTP 503', retryAfterMs: 2_000 });
    expect(ws.reconnect()).toBe(2_000);
    expect(ws.reason).toBe('HTTP 503');
  });

  it('ignores a close reason that is not the JSON it expects', () => {
    const { ws } = session();
    ws.connecting(WS_URL);
    expect(ws.closed(1013, '{"retryMs":"soon"')).toEqual({ kind: 'reconnect' });
    expect(ws.reconnect()).toBe(100);
  });
});
