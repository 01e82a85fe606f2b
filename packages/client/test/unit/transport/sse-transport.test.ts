import { describe, expect, it } from 'vitest';
import { sseTransport } from '../../../src/transport/sse-transport.js';
import { SubscriptionError } from '../../../src/transport/subscription-error.js';
import type { TransportEvent } from '../../../src/transport/transport-event.js';
import { emptyStats } from '../../../src/transport/transport-stats.js';

const EVENTS_URL = 'http://publisher.test/streams/s/events';

/** A fake fetch answering each connection with the next of `answers`, logging the Last-Event-ID it was sent. */
function fakeFetch(answers: Array<() => Response>, sent: Array<string | null>): typeof fetch {
  let next = 0;
  return async (_input, init) => {
    sent.push(new Headers(init?.headers).get('last-event-id'));
    const answer = answers[Math.min(next++, answers.length - 1)]!;
    return answer();
  };
}

const stream = (...chunks: string[]) =>
  new Response(
    new ReadableStream({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        controller.close();
      },
    }),
    { headers: { 'content-type': 'text/event-stream' } },
  );

async function take(events: AsyncGenerator<TransportEvent>, count: number): Promise<TransportEvent[]> {
  const taken: TransportEvent[] = [];
  for await (const event of events) {
    taken.push(event);
    if (taken.length === count) break;
  }
  return taken;
}

const options = (fetchImpl: typeof fetch) => ({
  format: 'turtle' as const,
  backoff: { initialDelayMs: 1, maxDelayMs: 1, random: () => 0 },
  maxEventBytes: 1_000,
  stats: emptyStats(),
  fetch: fetchImpl,
});

describe('sseTransport', () => {
  it('hands over elements across a connection that ended, resuming with the last id', async () => {
    const sent: Array<string | null> = [];
    const fetchImpl = fakeFetch([() => stream('id: ep-1\ndata: one\n\nid: ep-2\ndata: tw'), () => stream('id: ep-3\ndata: three\n\n')], sent);
    const events = await take(sseTransport(EVENTS_URL, options(fetchImpl)), 3);
    expect(events.map((event) => event.type)).toEqual(['element', 'reconnect', 'element']);
    expect(events[0]).toMatchObject({ text: 'one', id: 'ep-1' });
    expect(events[1]).toMatchObject({ reason: 'stream ended', delayMs: 0 });
    expect(events[2]).toMatchObject({ text: 'three', id: 'ep-3' });
    expect(sent).toEqual([null, 'ep-1']);
  });

  it('leaves a stream that sheds it, and says so', async () => {
    const sent: Array<string | null> = [];
    const fetchImpl = fakeFetch([() => stream('id: ep-1\ndata: one\n\nevent: shed\ndata: {}\n\ndata: never\n\n'), () => stream('data: after\n\n')], sent);
    const events = await take(sseTransport(EVENTS_URL, options(fetchImpl)), 3);
    expect(events).toMatchObject([{ type: 'element', text: 'one' }, { type: 'reconnect', reason: 'shed by the server' }, { type: 'element', text: 'after' }]);
  });

  it('throws SubscriptionError with the problem of a refusal', async () => {
    const problem = { type: 'about:blank', code: 'PUB_ERR_UNKNOWN_STREAM', detail: 'no stream s' };
    const fetchImpl = fakeFetch([() => Response.json(problem, { status: 404, headers: { 'content-type': 'application/problem+json' } })], []);
    const failure = await take(sseTransport(EVENTS_URL, options(fetchImpl)), 1).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SubscriptionError);
    expect(failure).toMatchObject({ status: 404, problem: { code: 'PUB_ERR_UNKNOWN_STREAM' } });
  });

  it('waits as long as Retry-After asks when the server is in trouble', async () => {
    const fetchImpl = fakeFetch([() => new Response(null, { status: 503, headers: { 'retry-after': '0' } }), () => stream('data: back\n\n')], []);
    const events = await take(sseTransport(EVENTS_URL, options(fetchImpl)), 2);
    expect(events).toMatchObject([{ type: 'reconnect', reason: 'HTTP 503', delayMs: 0 }, { type: 'element', text: 'back' }]);
  });

  it('closes the connection when the consumer stops reading while the stream is still open', async () => {
    const signals: AbortSignal[] = [];
    const fetchImpl: typeof fetch = async (_input, init) => {
      signals.push(init!.signal!);
      // Never closed by the server: only the client can end this connection.
      return new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('id: ep-1\ndata: one\n\n'));
          },
        }),
        { headers: { 'content-type': 'text/event-stream' } },
      );
    };
    const events = await take(sseTransport(EVENTS_URL, options(fetchImpl)), 1);
    expect(events).toMatchObject([{ type: 'element', text: 'one' }]);
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
  });
});
