import { afterEach, describe, expect, it, vi } from 'vitest';
import { type StreamUpdate, subscribe } from '../../src/subscribe.js';
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

interface Exchange {
  sentAt: number;
  answeredAt: number;
  status: number;
  cacheControl: string | null;
  ifNoneMatch: string | null;
  prefer: string | null;
}

/** A fetch that logs every exchange, to see when the client asks and what it gets. */
function loggingFetch(log: Exchange[]): typeof fetch {
  return async (input, init) => {
    const sentAt = Date.now();
    const response = await fetch(input, init);
    const headers = new Headers(init?.headers);
    if (String(input).endsWith('/latest')) {
      log.push({
        sentAt,
        answeredAt: Date.now(),
        status: response.status,
        cacheControl: response.headers.get('cache-control'),
        ifNoneMatch: headers.get('if-none-match'),
        prefer: headers.get('prefer'),
      });
    }
    return response;
  };
}

async function consume(iterable: AsyncIterable<unknown>, updates: StreamUpdate[]) {
  for await (const event of iterable) if ((event as StreamUpdate).type === 'update') updates.push(event as StreamUpdate);
}

/** A smart-polling subscription that logs its exchanges, stopped by `stop`. */
const smartSubscription = (streamUrl: string, log: Exchange[], schedule: { jitterMs: number; minPollIntervalMs: number; pollHold?: boolean }) =>
  subscribe(streamUrl, { transport: 'poll', pollStrategy: 'smart', ...schedule, clockOffset: false, signal: stop.signal, fetch: loggingFetch(log) });

describe('smart polling', () => {
  it('makes no request while the fragment is fresh, revalidates with If-None-Match (304), then gets the next element', async () => {
    running = await startTestPublisher({ intervalMs: 3_000 });
    await running.push();
    const log: Exchange[] = [];
    const updates: StreamUpdate[] = [];
    stop = new AbortController();
    const subscription = smartSubscription(running.streamUrl, log, { jitterMs: 0, minPollIntervalMs: 200 });
    const consuming = consume(subscription, updates);
    await vi.waitUntil(() => log.some((exchange) => exchange.status === 304), { timeout: 10_000, interval: 10 });
    const [first, second] = log;
    const maxAge = Number(/max-age=(\d+)/.exec(first!.cacheControl!)?.[1]);
    // Not before the answer's max-age (whole seconds, rounded down to the next element's due time), less a second of slack.
    expect(second!.sentAt - first!.answeredAt).toBeGreaterThanOrEqual(Math.max(200, (maxAge - 1) * 1000));
    expect(second!.ifNoneMatch).toMatch(/-1-turtle/);
    expect(updates.map((update) => update.seq)).toEqual([1]);
    await running.push();
    await vi.waitUntil(() => updates.length === 2, { timeout: 10_000, interval: 10 });
    expect(updates.map((update) => update.seq)).toEqual([1, 2]);
    expect(subscription.stats.notModified).toBeGreaterThanOrEqual(1);
    stop.abort();
    await consuming;
  });
});

/**
 * Smart polling of a stream whose source publishes an element every 800 ms, on schedule (what
 * the descriptor announces), until `count` updates came: the updates (each element in turn,
 * nothing skipped) and the exchanges.
 */
async function pollRegularStream(count: number, pollHold: boolean): Promise<{ log: Exchange[]; updates: StreamUpdate[] }> {
  running = await startTestPublisher({ intervalMs: 800 });
  await running.push();
  const source = setInterval(() => void running?.push(), 800);
  try {
    const log: Exchange[] = [];
    const updates: StreamUpdate[] = [];
    stop = new AbortController();
    const consuming = consume(smartSubscription(running.streamUrl, log, { jitterMs: 50, minPollIntervalMs: 50, pollHold }), updates);
    await vi.waitUntil(() => updates.length >= count, { timeout: 30_000, interval: 10 });
    stop.abort();
    await consuming;
    const seqs = updates.map((update) => update.seq!);
    // Nothing skipped: each element in turn (the first is whichever was newest).
    expect(seqs).toEqual(seqs.map((_, index) => seqs[0]! + index));
    return { log, updates };
  } finally {
    clearInterval(source);
  }
}

describe('smart polling on a regular stream', () => {
  it('asks once per element, when the next is due by the descriptor\'s interval and the newest element\'s time, held until it is served', async () => {
    const { log, updates } = await pollRegularStream(12, false);
    // After the first element (the poller learns when the next is due from it), one request per
    // element — polling every 50 ms would ask 16 times — each asking to be held (a quarter
    // interval, at least a second), so that one sent before its element is served is answered
    // with it rather than with a 304 and a second request.
    const afterFirst = log.slice(1).filter((exchange) => exchange.sentAt < updates.at(-1)!.receivedAt.getTime());
    expect(afterFirst.length).toBe(updates.length - 1);
    expect(afterFirst.every((exchange) => exchange.prefer === 'wait=1' && exchange.status === 200)).toBe(true);
  });

  it('holding: asks once per element, before it is due, and the publisher answers when it comes', async () => {
    const { log, updates } = await pollRegularStream(8, true);
    // After the first element (the poller learns when the next is due from it), one request
    // per element: each asks to be held (a quarter interval and the spread, in whole seconds)...
    const afterFirst = log.slice(1).filter((exchange) => exchange.sentAt < updates.at(-1)!.receivedAt.getTime());
    expect(afterFirst.length).toBe(updates.length - 1);
    expect(afterFirst.every((exchange) => exchange.prefer === 'wait=1' && exchange.status === 200)).toBe(true);
    // ...and most were sent before their element existed, held until it came.
    const held = afterFirst.filter((exchange) => exchange.answeredAt - exchange.sentAt >= 20);
    expect(held.length).toBeGreaterThanOrEqual(afterFirst.length / 2);
  });
});

/** What the publisher counts (`/metrics`): `/latest` requests answered, and those it holds now. */
async function latestRequestsSeenByPublisher(baseUrl: string): Promise<number> {
  const text = await (await fetch(new URL('/metrics', baseUrl))).text();
  let count = 0;
  for (const match of text.matchAll(/^rdf_stream_http_requests_total\{[^}]*route="\/streams\/:id\/latest"[^}]*\} (\d+)$/gm)) count += Number(match[1]);
  for (const match of text.matchAll(/^rdf_stream_long_poll_waiting\{[^}]*\} (\d+)$/gm)) count += Number(match[1]);
  return count;
}

describe('smart polling by several clients, counted by the publisher', () => {
  it('each client gets every element with at most 1.2 requests per element, though each is served a while after it is stamped', async () => {
    const intervalMs = 1_000;
    // As a busy publisher does (the element written and compressed after it is stamped): each
    // element comes this long after its `prov:generatedAtTime`, when pollers ask for it.
    const servedAfterMs = 100;
    const clients = 3;
    const elements = 10;
    running = await startTestPublisher({ intervalMs });
    await running.push();
    const source = setInterval(() => void running?.push(undefined, new Date(Date.now() - servedAfterMs)), intervalMs);
    try {
      stop = new AbortController();
      const updates = Array.from({ length: clients }, () => [] as StreamUpdate[]);
      // A jitter smaller than the lateness, so that the margin is learnt within the first elements.
      const subscriptions = updates.map(() => subscribe(running!.streamUrl, { transport: 'poll', pollStrategy: 'smart', jitterMs: 50, clockOffset: false, signal: stop.signal }));
      const consuming = subscriptions.map((subscription, index) => consume(subscription, updates[index]!));
      // Counted from an element every client has to the one `elements` later: a client's first
      // answer is the state it found, before it knew the schedule, and it learns how late
      // elements come from the next few (its margin doubles from 20 ms with each miss). A
      // request in flight at either end is counted once (answered or held), so that the two
      // ends cancel out.
      await vi.waitUntil(() => updates.every((got) => got.length >= 1), patience);
      const fromSeq = Math.max(...updates.map((got) => got[0]!.seq!)) + 5;
      const reached = (seq: number) => updates.every((got) => got.some((update) => update.seq! >= seq));
      await vi.waitUntil(() => reached(fromSeq), patience);
      const before = await latestRequestsSeenByPublisher(running.url);
      await vi.waitUntil(() => reached(fromSeq + elements), patience);
      const requests = (await latestRequestsSeenByPublisher(running.url)) - before;
      stop.abort();
      await Promise.all(consuming);
      for (const [index, got] of updates.entries()) {
        const seqs = got.map((update) => update.seq!);
        // Every element in turn, none skipped.
        expect(seqs).toEqual(seqs.map((_, position) => seqs[0]! + position));
        expect(subscriptions[index]!.stats.reconnects).toBe(0);
      }
      expect(requests / (clients * elements)).toBeLessThanOrEqual(1.2);
    } finally {
      clearInterval(source);
    }
  });
});

describe('fixed polling (the study\'s clients)', () => {
  it('pauses after each response and asks nothing while its cached copy is fresh', async () => {
    running = await startTestPublisher({ intervalMs: 3_000 });
    await running.push();
    const log: Exchange[] = [];
    const updates: StreamUpdate[] = [];
    stop = new AbortController();
    const consuming = consume(
      subscribe(running.streamUrl, { transport: 'poll', pollStrategy: 'fixed', pollIntervalMs: 100, clockOffset: false, signal: stop.signal, fetch: loggingFetch(log) }),
      updates,
    );
    await vi.waitUntil(() => log.length >= 2, { timeout: 10_000, interval: 10 });
    const maxAge = Number(/max-age=(\d+)/.exec(log[0]!.cacheControl!)?.[1]);
    expect(log[1]!.sentAt - log[0]!.answeredAt).toBeGreaterThanOrEqual(Math.max(100, (maxAge - 1) * 1000));
    stop.abort();
    await consuming;
    expect(updates.map((update) => update.seq)).toEqual([1]);
  });
});

describe('long-polling', () => {
  it('gets each element as it is published, about one request per element', async () => {
    running = await startTestPublisher();
    await running.push();
    const updates: StreamUpdate[] = [];
    stop = new AbortController();
    const subscription = subscribe(running.streamUrl, { transport: 'long-poll', clockOffset: false, signal: stop.signal });
    const consuming = consume(subscription, updates);
    for (let seq = 2; seq <= 4; seq++) {
      await running.untilWaiting(1);
      await running.push();
      await vi.waitUntil(() => updates.length === seq, patience);
    }
    expect(updates.map((update) => update.seq)).toEqual([1, 2, 3, 4]);
    expect(updates.every((update) => update.transport === 'long-poll')).toBe(true);
    expect(subscription.stats.requests).toBeLessThanOrEqual(5);
    stop.abort();
    await consuming;
  });
});

describe('auto', () => {
  it('reads the descriptor and takes SSE', async () => {
    running = await startTestPublisher();
    stop = new AbortController();
    const subscription = subscribe(running.streamUrl, { signal: stop.signal, clockOffset: false });
    const updates: StreamUpdate[] = [];
    const consuming = consume(subscription, updates);
    await running!.untilSubscribers(1);
    await running.push();
    await vi.waitUntil(() => updates.length === 1, patience);
    expect(subscription.transport).toBe('sse');
    stop.abort();
    await consuming;
  });
});
