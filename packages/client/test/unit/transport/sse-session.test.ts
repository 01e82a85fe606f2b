import { describe, expect, it } from 'vitest';
import { SseSession } from '../../../src/transport/sse-session.js';
import type { TransportEvent } from '../../../src/transport/transport-event.js';
import { emptyStats } from '../../../src/transport/transport-stats.js';

/** A session without jitter (backoff at its ceiling), and what it emitted. */
function session(options: { lastEventId?: string; maxEventBytes?: number } = {}) {
  const events: TransportEvent[] = [];
  const stats = emptyStats();
  const sse = new SseSession(
    { format: 'turtle', backoff: { initialDelayMs: 100, maxDelayMs: 1_000, random: () => 1 }, maxEventBytes: options.maxEventBytes ?? 1_000, stats, ...options },
    (event) => events.push(event),
  );
  return { sse, events, stats };
}

describe('SseSession', () => {
  it('resumes from the last id it received, across connections', () => {
    const { sse, stats } = session({ lastEventId: 'e-3' });
    expect(sse.connecting()).toEqual({ accept: 'text/event-stream', 'last-event-id': 'e-3' });
    expect(sse.answered(200, 'text/event-stream; charset=utf-8', undefined)).toEqual({ kind: 'stream' });
    sse.received('id: e-4\ndata: a\n\nid: e-5\nda', 1_000);
    expect(sse.lastEventId).toBe('e-4');
    sse.reconnect('socket hang up');
    expect(sse.connecting()).toEqual({ accept: 'text/event-stream', 'last-event-id': 'e-4' });
    // The half event of the connection that ended is not carried over.
    sse.received('ta: b\n\n', 2_000);
    expect(stats.requests).toBe(2);
    expect(stats.elements).toBe(1);
  });

  it('emits elements with their id and the time their last chunk came, and gaps with sequence numbers', () => {
    const { sse, events } = session();
    sse.connecting();
    sse.received('id: ep-7\ndata: <a> <b> <c> .\n', 10);
    sse.received('\n', 20);
    sse.received('event: gap\ndata: {"requestedId":"ep-2","oldestRetained":"ep-5","reason":"expired"}\n\n', 30);
    expect(events).toEqual([
      { type: 'element', text: '<a> <b> <c> .', format: 'turtle', receivedAt: 20, id: 'ep-7' },
      { type: 'gap', afterSeq: 2, resumedAtSeq: 5, reason: 'expired' },
    ]);
  });

  it("waits at least the server's retry: and backs off while connections bring nothing, from zero again after an element", () => {
    const { sse } = session();
    sse.connecting();
    sse.received('retry: 3000\n\n', 0);
    expect(sse.reconnect('stream ended')).toBe(3_100);
    sse.connecting();
    expect(sse.reconnect()).toBe(3_200);
    sse.connecting();
    sse.received('data: x\n\n', 0);
    expect(sse.reconnect()).toBe(3_100);
  });

  it('drops a connection on shed, and says why', () => {
    const { sse } = session();
    sse.connecting();
    expect(sse.received('event: shed\ndata: {}\n\n', 0)).toBe(false);
    expect(sse.received('data: late\n\n', 0)).toBe(false);
    sse.reconnect('aborted');
    expect(sse.reason).toBe('shed by the server');
  });

  it('drops a connection whose event grows beyond maxEventBytes, even without an end', () => {
    const { sse, events } = session({ maxEventBytes: 12 });
    sse.connecting();
    expect(sse.received('data: 12345', 0)).toBe(true);
    expect(sse.received('67890', 0)).toBe(false);
    expect(sse.reason).toBe('event larger than 12 bytes');
    expect(events).toEqual([]);
  });

  it('retries server trouble after Retry-After, refuses 4xx for good, and reconnects to what is not an event stream', () => {
    const { sse } = session();
    sse.connecting();
    expect(sse.answered(503, undefined, '7')).toEqual({ kind: 'retry', reason: 'HTTP 503', retryAfterMs: 7_000 });
    expect(sse.reconnect()).toBe(7_000);
    sse.connecting();
    expect(sse.answered(404, 'application/problem+json', undefined)).toEqual({ kind: 'refused' });
    sse.connecting();
    expect(sse.answered(200, 'text/html', undefined)).toMatchObject({ kind: 'retry', reason: 'not an event stream (text/html)' });
    // Retry-After replaced the backoff's first step: this is that first step.
    expect(sse.reconnect()).toBe(100);
  });
});
