import { describe, expect, it } from 'vitest';
import { EVENT_STREAM_MEDIA_TYPE, mediaTypeIri } from '@rdf-stream/protocol';
import { readDescriptor, type StreamUpdate, subscribe, type Subscription, type SubscriptionEvent } from '../../src/subscribe.js';

const STREAM = 'http://publisher.test/streams/s';
const backoff = { initialDelayMs: 1, maxDelayMs: 1, random: () => 0 };

/** An element as the publisher sends it in Turtle, on one line. */
const element = (id: string, generatedAt: string, value = 1) =>
  `<${STREAM}/elements/${id}> <http://www.w3.org/ns/prov#generatedAtTime> "${generatedAt}"^^<http://www.w3.org/2001/XMLSchema#dateTime> . ` +
  `<${STREAM}/observations/${id}> <http://www.w3.org/ns/sosa/hasSimpleResult> ${value} .`;

const descriptor = (options: { sse: boolean; resolution?: string }) =>
  [
    options.sse ? `<${STREAM}#events-turtle> <http://www.w3.org/ns/dcat#mediaType> <${mediaTypeIri(EVENT_STREAM_MEDIA_TYPE)}> .` : '',
    options.resolution ? `<${STREAM}> <http://www.w3.org/ns/dcat#temporalResolution> "${options.resolution}"^^<http://www.w3.org/2001/XMLSchema#duration> .` : '',
  ].join('\n');

/** An event stream that sends `chunks`, then stays open until the request is aborted. */
const openStream = (chunks: string[], signal: AbortSignal | null | undefined) =>
  new Response(
    new ReadableStream({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        signal?.addEventListener('abort', () => controller.error(signal.reason));
      },
    }),
    { headers: { 'content-type': 'text/event-stream' } },
  );

const sseFrames = (...frames: Array<[string, string]>) => frames.map(([id, data]) => `id: ${id}\ndata: ${data}\n\n`);

/** A publisher in memory: answers by path, records what was asked. */
function fakePublisher(routes: Record<string, (init: RequestInit | undefined) => Response>) {
  const asked: string[] = [];
  const signals: AbortSignal[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    const path = new URL(String(input)).pathname;
    asked.push(path);
    if (init?.signal) signals.push(init.signal);
    const route = routes[path];
    return route ? route(init) : new Response('', { status: 404 });
  };
  return { fetch: fetchImpl, asked, signals };
}

async function take(subscription: Subscription, count: number): Promise<SubscriptionEvent[]> {
  const events: SubscriptionEvent[] = [];
  for await (const event of subscription) {
    events.push(event);
    if (events.length === count) break;
  }
  return events;
}

describe('subscribe', () => {
  it('refuses `from` with `lastEventId`, and a `from` that is no sequence number nor valid date', () => {
    expect(() => subscribe(STREAM, { from: 3, lastEventId: 'e1-2' })).toThrow(TypeError);
    expect(() => subscribe(STREAM, { from: -1 })).toThrow(RangeError);
    expect(() => subscribe(STREAM, { from: 1.5 })).toThrow(RangeError);
    expect(() => subscribe(STREAM, { from: new Date(Number.NaN) })).toThrow(RangeError);
    expect(subscribe(STREAM, { from: 0 }).replaying).toBe(true);
    expect(subscribe(STREAM).replaying).toBe(false);
  });

  it('takes SSE when the descriptor offers it, and decodes each element with its latency on the corrected clock', async () => {
    const publisher = fakePublisher({
      '/streams/s': () => new Response(descriptor({ sse: true })),
      '/streams/s/events': (init) => openStream(sseFrames(['e1-1', element('e1-1', '2026-11-22T16:00:01Z')]), init?.signal),
    });
    const subscription = subscribe(`${STREAM}/`, { fetch: publisher.fetch, clockOffset: 250, backoff });
    expect(subscription.transport).toBeUndefined();
    const [update] = (await take(subscription, 1)) as StreamUpdate[];
    expect(subscription.transport).toBe('sse');
    expect(update).toMatchObject({ type: 'update', seq: 1, graph: `${STREAM}/elements/e1-1`, transport: 'sse', replayed: false });
    expect(update!.generatedAt).toEqual(new Date('2026-11-22T16:00:01Z'));
    expect(update!.quads).toHaveLength(2);
    expect(update!.latencyMs).toBe(update!.receivedAt.getTime() + 250 - Date.parse('2026-11-22T16:00:01Z'));
    expect(publisher.asked).toEqual(['/streams/s', '/streams/s/events']);
  });

  it('reports a jump in the sequence numbers as a gap, and an undecodable element as an error, then goes on', async () => {
    const publisher = fakePublisher({
      '/streams/s/events': (init) =>
        openStream(
          sseFrames(['e1-1', element('e1-1', '2026-11-22T16:00:01Z')], ['e1-2', '<unterminated'], ['e1-4', element('e1-4', '2026-11-22T16:00:04Z')]),
          init?.signal,
        ),
    });
    const events = await take(subscribe(STREAM, { transport: 'sse', fetch: publisher.fetch, clockOffset: false, backoff }), 4);
    expect(events.map((event) => event.type)).toEqual(['update', 'error', 'gap', 'update']);
    expect(events[2]).toEqual({ type: 'gap', afterSeq: 1, resumedAtSeq: 4, reason: 'sequence-jump' });
    expect(events[3]).toMatchObject({ seq: 4 });
  });

  it('polls /latest when the descriptor offers no SSE', async () => {
    const publisher = fakePublisher({
      '/streams/s': () => new Response(descriptor({ sse: false, resolution: 'PT5S' })),
      '/streams/s/latest': () => new Response(element('e1-7', new Date().toISOString()), { headers: { 'content-type': 'text/turtle', etag: '"e1-7-turtle"' } }),
    });
    const subscription = subscribe(STREAM, { fetch: publisher.fetch, clockOffset: false, backoff });
    const [update] = await take(subscription, 1);
    expect(subscription.transport).toBe('poll');
    expect(update).toMatchObject({ type: 'update', seq: 7, transport: 'poll' });
    expect(publisher.asked).toEqual(['/streams/s', '/streams/s/latest']);
  });

  it('asks for no descriptor when the transport is named and needs none', async () => {
    const publisher = fakePublisher({
      '/streams/s/events': (init) => openStream(sseFrames(['e1-1', element('e1-1', '2026-11-22T16:00:01Z')]), init?.signal),
    });
    await take(subscribe(STREAM, { transport: 'sse', fetch: publisher.fetch, clockOffset: false, backoff }), 1);
    expect(publisher.asked).toEqual(['/streams/s/events']);
  });

  it('ends at once when iteration stops while waiting for an element that may never come, aborting the request', async () => {
    const publisher = fakePublisher({
      '/streams/s/events': (init) => openStream(sseFrames(['e1-1', element('e1-1', '2026-11-22T16:00:01Z')]), init?.signal),
    });
    const iterator = subscribe(STREAM, { transport: 'sse', fetch: publisher.fetch, clockOffset: false, backoff })[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ type: 'update', seq: 1 });
    // The stream stays open and quiet: this `next()` would wait for ever.
    const pending = iterator.next();
    await iterator.return?.();
    expect(await pending).toMatchObject({ done: true });
    expect(publisher.signals).toHaveLength(1);
    expect(publisher.signals[0]!.aborted).toBe(true);
  });
});

describe('readDescriptor', () => {
  it("reads whether SSE is offered and the stream's interval", async () => {
    const publisher = fakePublisher({ '/streams/s': () => new Response(descriptor({ sse: true, resolution: 'PT1M30S' })) });
    expect(await readDescriptor(STREAM, publisher.fetch)).toEqual({ offersSse: true, expectedIntervalMs: 90_000 });
    const irregular = fakePublisher({ '/streams/s': () => new Response(descriptor({ sse: false })) });
    expect(await readDescriptor(STREAM, irregular.fetch)).toEqual({ offersSse: false, expectedIntervalMs: null });
  });

  it('gives undefined when the descriptor cannot be read', async () => {
    expect(await readDescriptor(STREAM, fakePublisher({}).fetch)).toBeUndefined();
    expect(await readDescriptor(STREAM, fakePublisher({ '/streams/s': () => new Response('not turtle <') }).fetch)).toBeUndefined();
    expect(await readDescriptor(STREAM, () => Promise.reject(new TypeError('fetch failed')))).toBeUndefined();
  });
});
