import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { streamEvents, subscribe } from '../../src/subscribe.js';
import type { TransportEvent } from '../../src/transport/transport-event.js';
import { SubscriptionError } from '../../src/transport/subscription-error.js';
import { collect } from '../support/collect.js';
import { startTestPublisher, type TestPublisher } from '@rdf-stream/publisher/testing';

/** For state no event announces: checked every 10 ms, with a deadline for a broken server, not a measure of speed. */
const patience = { timeout: 30_000, interval: 10 };

let running: TestPublisher | undefined;
let stop: AbortController;
afterEach(async () => {
  stop?.abort();
  await running?.close();
  running = undefined;
});

const fastBackoff = { initialDelayMs: 20, maxDelayMs: 100 };
/** The epoch of the test stream's log: element ids are `{epoch}-{seq}`. */
const epochOf = (publisher: TestPublisher) => publisher.hub.log.epoch;

describe('subscribe over SSE', () => {
  it('receives pushed elements with their quads, sequence numbers and a small latency', async () => {
    running = await startTestPublisher();
    stop = new AbortController();
    const subscription = subscribe(running.streamUrl, { transport: 'sse', signal: stop.signal, backoff: fastBackoff });
    const collected = collect(subscription);
    await running!.untilSubscribers(1);
    for (let index = 0; index < 3; index++) await running.push([index, index + 1]);
    await collected.next(3);
    const updates = collected.updates();
    expect(updates.map((update) => update.seq)).toEqual([1, 2, 3]);
    expect(updates[0]!.quads).toHaveLength(1 + 2 * 6);
    // The values pushed, as plain values, read once and kept.
    expect(updates.map((update) => update.observations.map((observation) => observation.value))).toEqual([[0, 1], [1, 2], [2, 3]]);
    expect(updates[2]!.observations).toBe(updates[2]!.observations);
    expect(updates[2]!.observations[1]).toMatchObject({
      featureOfInterest: `${running.streamUrl}/facilities/p2`,
      observedProperty: 'http://vocab.datex.org/terms#parkingNumberOfVacantSpaces',
      unit: undefined,
      resultTime: updates[2]!.generatedAt,
    });
    for (const update of updates) {
      expect(update.transport).toBe('sse');
      expect(update.latencyMs).toBeGreaterThanOrEqual(-5);
      expect(update.latencyMs).toBeLessThan(5_000);
    }
    // Same machine: the estimated offset is near zero, within its uncertainty.
    expect(Math.abs(subscription.clockOffset!.offsetMs)).toBeLessThanOrEqual(subscription.clockOffset!.uncertaintyMs + 2);
  });

  it('resumes after the server drops the connection, with no gap and no duplicate', async () => {
    running = await startTestPublisher();
    stop = new AbortController();
    const collected = collect(subscribe(running.streamUrl, { transport: 'sse', signal: stop.signal, backoff: fastBackoff }));
    await running.untilSubscribers(1);
    await running.push();
    await running.push();
    await collected.next(2);
    // The server ends every stream (as at shutdown); elements published meanwhile must arrive.
    await running.hub.broadcaster.closeAll(() => 10);
    await running.push();
    await running.push();
    await collected.until(() => collected.events.some((event) => event.type === 'reconnect'));
    await collected.next(4);
    await running.push();
    await collected.next(5);
    expect(collected.updates().map((update) => update.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(collected.events.filter((event) => event.type === 'gap')).toEqual([]);
  });

  it('reports the server\'s explicit gap when the id it resumes from has expired', async () => {
    // Pages of one element: retention keeps exactly the 2 newest.
    running = await startTestPublisher({ flags: ['--retained-elements', '2', '--page-elements', '1'] });
    for (let index = 0; index < 5; index++) await running.push();
    stop = new AbortController();
    const lastEventId = `${epochOf(running)}-1`;
    const collected = collect(subscribe(running.streamUrl, { transport: 'sse', lastEventId, signal: stop.signal }));
    await collected.next(2);
    expect(collected.events[0]).toEqual({ type: 'gap', afterSeq: 1, resumedAtSeq: 4, reason: 'expired' });
    expect(collected.updates().map((update) => update.seq)).toEqual([4, 5]);
  });

  it.each([
    ['a bare number', (_epoch: string) => '2'],
    ['an id of another life of the log', (epoch: string) => `${epoch.startsWith('a') ? 'b' : 'a'}${epoch.slice(1)}-2`],
  ])('reports the server\'s epoch gap when it resumes from %s, and receives every retained element', async (_what, idFor) => {
    running = await startTestPublisher();
    for (let index = 0; index < 3; index++) await running.push();
    stop = new AbortController();
    const lastEventId = idFor(epochOf(running));
    const collected = collect(subscribe(running.streamUrl, { transport: 'sse', lastEventId, signal: stop.signal }));
    await collected.next(3);
    expect(collected.events[0]).toEqual({ type: 'gap', afterSeq: undefined, resumedAtSeq: 1, reason: 'epoch' });
    expect(collected.updates().map((update) => update.seq)).toEqual([1, 2, 3]);
  });

  it('throws a SubscriptionError with the problem code when the stream does not exist', async () => {
    running = await startTestPublisher();
    const subscription = subscribe(`${running.streamUrl.replace(/parking$/, 'nope')}`, { transport: 'sse', clockOffset: false });
    await expect(collect(subscription).done.then(() => 'ended')).resolves.toBe('ended');
    const again = subscribe(`${running.streamUrl.replace(/parking$/, 'nope')}`, { transport: 'sse', clockOffset: false });
    const iterator = again[Symbol.asyncIterator]();
    const error = await iterator.next().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(SubscriptionError);
    expect((error as SubscriptionError).problem?.code).toBe('PUB_ERR_STREAM_NOT_FOUND');
  });
});

describe('streamEvents (lean mode)', () => {
  it('hands over each element as its text, with its id and arrival time, undecoded, with subscribe’s defaults', async () => {
    running = await startTestPublisher();
    stop = new AbortController();
    const events: TransportEvent[] = [];
    const stats = { requests: 0, notModified: 0, elements: 0, reconnects: 0 };
    const received = (async () => {
      for await (const event of streamEvents(`${running!.streamUrl}/`, 'sse', { signal: stop.signal }, stats)) {
        events.push(event);
        if (events.length === 2) return;
      }
    })();
    await running!.untilSubscribers(1);
    const before = Date.now();
    await running.push([4, 2]);
    await running.push([5, 3]);
    await received;
    const epoch = epochOf(running);
    expect(events.map((event) => (event.type === 'element' ? [event.id, event.format] : event.type))).toEqual([
      [`${epoch}-1`, 'turtle'],
      [`${epoch}-2`, 'turtle'],
    ]);
    const first = events[0] as Extract<TransportEvent, { type: 'element' }>;
    expect(first.text).toContain('prov:generatedAtTime');
    expect(first.receivedAt).toBeGreaterThanOrEqual(before);
    expect(stats).toMatchObject({ requests: 1, elements: 2, reconnects: 0 });
  });
});

describe('subscribe from the history, then live', () => {
  /** Elements 1..8 generated a second apart, a minute ago, on pages of 3 (two full, one open). */
  const startMs = Date.now() - 60_000;
  const timeOf = (seq: number) => new Date(startMs + seq * 1_000);
  async function publisherWithEight(): Promise<TestPublisher> {
    // No client cache on `/latest` (irregular stream, no micro-cache): polls see each element.
    const publisher = await startTestPublisher({ flags: ['--page-elements', '3', '--micro-cache-seconds', '0'], intervalMs: null });
    for (let seq = 1; seq <= 8; seq++) await publisher.push([seq], timeOf(seq));
    return publisher;
  }

  /**
   * A fetch that publishes element 9 just before the live transport's first request, that is
   * after the history was read and before live delivery starts: the hand-over must not lose it.
   */
  const publishingBeforeLive = (publisher: TestPublisher, live: RegExp): typeof fetch => {
    let published = false;
    return async (input, init) => {
      if (!published && live.test(String(input))) {
        published = true;
        await publisher.push([9]);
      }
      return fetch(input, init);
    };
  };

  const expectExactlyOnceInOrder = (collected: ReturnType<typeof collect>) => {
    const updates = collected.updates();
    expect(updates.map((update) => update.seq)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(updates.map((update) => update.replayed)).toEqual([true, true, true, true, true, true, true, false, false]);
    expect(updates.slice(0, 7).every((update) => Number.isNaN(update.latencyMs))).toBe(true);
    expect(updates.slice(7).every((update) => Number.isFinite(update.latencyMs))).toBe(true);
    expect(updates[0]!.quads).toHaveLength(1 + 6);
    expect(collected.events.filter((event) => event.type !== 'update')).toEqual([]);
  };

  it.each([
    ['a sequence number', () => 2],
    ['a time', () => timeOf(2)],
  ])('SSE, from %s: 2..8 from the history pages, 9 and 10 live, each exactly once, in order', async (_what, from) => {
    running = await publisherWithEight();
    stop = new AbortController();
    const subscription = subscribe(running.streamUrl, {
      transport: 'sse',
      from: from(),
      signal: stop.signal,
      backoff: fastBackoff,
      fetch: publishingBeforeLive(running, /\/events\b/),
    });
    expect(subscription.replaying).toBe(true);
    const collected = collect(subscription);
    await collected.next(8);
    expect(subscription.replaying).toBe(false);
    await running.push([10]);
    await collected.next(9);
    expectExactlyOnceInOrder(collected);
    // The history was read page by page, not element by element.
    expect(subscription.stats.requests).toBe(1 + 3 + 1);
  });

  it('SSE, from a time deep in a long history: the time index, the page holding it and the pages after it, no other (not the root)', async () => {
    // 60 elements on pages of 3: page 19 holds 55–57, page 20 58–60, page 21 is open and empty.
    running = await startTestPublisher({ flags: ['--page-elements', '3'] });
    for (let seq = 1; seq <= 60; seq++) await running.push([seq], new Date(startMs - 60_000 + seq * 1_000));
    stop = new AbortController();
    const historyRequests: string[] = [];
    const counting: typeof fetch = (input, init) => {
      if (String(input).includes('/history')) historyRequests.push(new URL(String(input)).pathname);
      return fetch(input, init);
    };
    const from = new Date(startMs - 60_000 + 56 * 1_000);
    const collected = collect(subscribe(running.streamUrl, { transport: 'sse', from, signal: stop.signal, backoff: fastBackoff, fetch: counting }));
    await collected.next(5);
    expect(collected.updates().map((update) => update.seq)).toEqual([56, 57, 58, 59, 60]);
    const epoch = running.hub.log.epoch;
    // Two requests to the page holding the instant: the index (its path is known), then the page.
    expect(historyRequests).toEqual(['/streams/parking/history/index', ...[19, 20, 21].map((page) => `/streams/parking/history/${epoch}-${page}`)]);
  });

  it('polling: 2..8 from the history pages, then 9 (published during the hand-over) and 10 live, each exactly once', async () => {
    running = await publisherWithEight();
    stop = new AbortController();
    const collected = collect(
      subscribe(running.streamUrl, {
        transport: 'poll',
        from: 2,
        minPollIntervalMs: 20,
        jitterMs: 0,
        signal: stop.signal,
        backoff: fastBackoff,
        fetch: publishingBeforeLive(running, /\/latest\b/),
      }),
    );
    await collected.next(8);
    await running.push([10]);
    await collected.next(9);
    expectExactlyOnceInOrder(collected);
  });

  it('polling: the latest element, replayed already, is not delivered twice', async () => {
    running = await publisherWithEight();
    stop = new AbortController();
    const subscription = subscribe(running.streamUrl, { transport: 'poll', from: 7, minPollIntervalMs: 20, jitterMs: 0, signal: stop.signal });
    const collected = collect(subscription);
    await collected.next(2);
    // The first poll answered element 8 again: skipped.
    await vi.waitUntil(() => subscription.stats.requests >= 1 + 3 + 2, patience);
    await running.push([9]);
    await collected.next(3);
    expect(collected.updates().map((update) => [update.seq, update.replayed])).toEqual([
      [7, true],
      [8, true],
      [9, false],
    ]);
  });

  it('an empty history: goes live at once', async () => {
    running = await startTestPublisher({ flags: ['--page-elements', '3'] });
    stop = new AbortController();
    const subscription = subscribe(running.streamUrl, { transport: 'sse', from: new Date(Date.now() - 30_000), signal: stop.signal, backoff: fastBackoff });
    const collected = collect(subscription);
    await running!.untilSubscribers(1);
    expect(subscription.replaying).toBe(false);
    await running.push();
    await collected.next(1);
    expect(collected.updates().map((update) => [update.seq, update.replayed])).toEqual([[1, false]]);
  });

  it('says `expired` first when the start is older than the log retains', async () => {
    running = await startTestPublisher({ flags: ['--page-elements', '2', '--retained-elements', '4'] });
    for (let seq = 1; seq <= 8; seq++) await running.push([seq], timeOf(seq));
    stop = new AbortController();
    const collected = collect(subscribe(running.streamUrl, { transport: 'sse', from: 1, signal: stop.signal, backoff: fastBackoff }));
    await collected.next(4);
    expect(collected.events[0]).toEqual({ type: 'gap', afterSeq: 0, resumedAtSeq: 5, reason: 'expired' });
    expect(collected.updates().map((update) => update.seq)).toEqual([5, 6, 7, 8]);
  });

  it('takes `from` or `lastEventId`, not both', () => {
    expect(() => subscribe('http://127.0.0.1:1/streams/x', { from: 1, lastEventId: 'e-1' })).toThrow(TypeError);
    expect(() => subscribe('http://127.0.0.1:1/streams/x', { from: new Date(Number.NaN) })).toThrow(RangeError);
  });
});

describe('a misbehaving server', () => {
  let server: Server | undefined;
  afterEach(async () => {
    stop?.abort();
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  });

  async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
    server = createServer(handler);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const address = server.address() as { port: number };
    return `http://127.0.0.1:${address.port}/streams/x`;
  }

  it('an oversized event drops the connection and the client reconnects, without crashing', async () => {
    let connections = 0;
    const url = await serve((_request, response) => {
      connections++;
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(`data: ${'x'.repeat(50_000)}`); // never ends the event
    });
    stop = new AbortController();
    const collected = collect(subscribe(url, { transport: 'sse', maxEventBytes: 10_000, clockOffset: false, signal: stop.signal, backoff: fastBackoff }));
    await collected.until(() => collected.events.filter((event) => event.type === 'reconnect').length >= 2);
    stop.abort();
    await collected.done;
    const reconnect = collected.events.find((event) => event.type === 'reconnect');
    expect(reconnect).toMatchObject({ reason: 'event larger than 10000 bytes' });
    expect(connections).toBeGreaterThanOrEqual(2);
  });

  it('garbage that is not RDF is reported as a decode error and the stream goes on', async () => {
    const url = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('id: 1\ndata: this is not turtle\n\n');
      response.write('id: 2\ndata: <http://x/e/2> <http://www.w3.org/ns/prov#generatedAtTime> "2026-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .\n\n');
    });
    stop = new AbortController();
    const collected = collect(subscribe(url, { transport: 'sse', clockOffset: false, signal: stop.signal, backoff: fastBackoff }));
    await collected.next(1);
    expect(collected.events[0]).toMatchObject({ type: 'error' });
    expect(collected.updates()[0]).toMatchObject({ seq: 2, graph: 'http://x/e/2' });
  });

  it.each(['sse', 'poll', 'long-poll'] as const)('%s: a 503 with Retry-After is retried after that delay', async (transport) => {
    let requests = 0;
    const url = await serve((request, response) => {
      // The transport's own requests (smart polling reads the descriptor first: that one is not retried).
      if (/\/(latest|events)(\?|$)/.test(request.url ?? '')) requests++;
      response.writeHead(503, { 'retry-after': '1', 'content-type': 'application/problem+json' });
      response.end('{"code":"PUB_ERR_OVERLOADED"}');
    });
    stop = new AbortController();
    const collected = collect(subscribe(url, { transport, clockOffset: false, signal: stop.signal, backoff: fastBackoff }));
    await collected.until(() => collected.events.length >= 1);
    expect(collected.events[0]).toMatchObject({ type: 'reconnect', reason: 'HTTP 503', delayMs: 1000 });
    expect(requests).toBe(1);
  });

  it('a response that is not an event stream is retried, not parsed', async () => {
    const url = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html></html>');
    });
    stop = new AbortController();
    const collected = collect(subscribe(url, { transport: 'sse', clockOffset: false, signal: stop.signal, backoff: fastBackoff }));
    await collected.until(() => collected.events.length >= 1);
    expect(collected.events[0]).toMatchObject({ type: 'reconnect', reason: 'not an event stream (text/html)' });
  });
});
