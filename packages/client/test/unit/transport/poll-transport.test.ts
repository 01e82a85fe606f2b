import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PollHints } from '../../../src/transport/poll-schedule.js';
import { pollTransport } from '../../../src/transport/poll-transport.js';
import { emptyStats } from '../../../src/transport/transport-stats.js';

const T0 = Date.UTC(2026, 10, 24, 12, 0, 0);
const INTERVAL_MS = 1_000;
/** Element n is generated at T0 − 500 ms + (n − 1) × interval, and served from 30 ms later. */
const generatedAt = (n: number) => T0 - 500 + (n - 1) * INTERVAL_MS;
const SERVED_AFTER_MS = 30;

/**
 * A fake /latest on the fake clock, serving the newest element (see `generatedAt`);
 * `If-None-Match` with its ETag gets a 304 — held until the next element is served when the
 * request says `Prefer: wait` and `holds`. Logs when each request came.
 */
function fakeLatest(log: Array<{ atMs: number; status: number; prefer?: string }>, holds = true): typeof fetch {
  const newestAt = (now: number) => Math.floor((now - generatedAt(1) - SERVED_AFTER_MS) / INTERVAL_MS) + 1;
  return async (_input, init) => {
    const sentAt = Date.now();
    const requestHeaders = new Headers(init?.headers);
    const prefer = requestHeaders.get('prefer') ?? undefined;
    let newest = newestAt(sentAt);
    if (holds && prefer !== undefined && requestHeaders.get('if-none-match') === `"e${newest}"`) {
      await new Promise((resolve) => setTimeout(resolve, generatedAt(newest + 1) + SERVED_AFTER_MS - sentAt));
      newest = newestAt(Date.now());
    }
    const etag = `"e${newest}"`;
    const status = requestHeaders.get('if-none-match') === etag ? 304 : 200;
    log.push({ atMs: sentAt - T0, status, ...(prefer === undefined ? {} : { prefer }) });
    const headers = { etag, 'cache-control': 'max-age=0', date: new Date().toUTCString(), 'content-type': 'text/turtle' };
    return status === 304 ? new Response(null, { status, headers }) : new Response(`element ${newest}`, { status, headers });
  };
}

/** A smart poll transport on the fake clock, without jitter. */
const smartTransport = (fetchImpl: typeof fetch, hints: PollHints, signal: AbortSignal, stats = emptyStats()) =>
  pollTransport('http://publisher.test/streams/s/latest', {
    format: 'turtle',
    strategy: 'smart',
    pollIntervalMs: 500,
    jitterMs: 0,
    minPollIntervalMs: 100,
    backoff: { initialDelayMs: 1_000, maxDelayMs: 30_000 },
    stats,
    signal,
    fetch: fetchImpl,
    hints,
    random: () => 0,
  });

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('pollTransport, smart, on a regular stream', () => {
  /** Polls the fake /latest until 5 elements came; what it asked. */
  async function pollFive(holds: boolean) {
    const log: Array<{ atMs: number; status: number; prefer?: string }> = [];
    const hints: PollHints = { expectedIntervalMs: INTERVAL_MS, clockOffsetMs: 0 };
    const stop = new AbortController();
    const transport = smartTransport(fakeLatest(log, holds), hints, stop.signal);
    const elements: string[] = [];
    const consuming = (async () => {
      for await (const event of transport) {
        if (event.type !== 'element') continue;
        elements.push(event.text);
        // What subscribe does once it has decoded the element: its generation time.
        const n = Number(event.text.split(' ')[1]);
        hints.generatedAtMs = generatedAt(n);
        if (elements.length === 5) stop.abort();
      }
    })();
    await vi.advanceTimersByTimeAsync(10_000);
    await consuming;
    expect(elements).toEqual(['element 1', 'element 2', 'element 3', 'element 4', 'element 5']);
    return log;
  }

  it('asks when the next element is due, held until it is served: one request per element', async () => {
    expect(await pollFive(true)).toEqual([
      { atMs: 0, status: 200 }, // element 1, generated 500 ms before
      { atMs: 500, status: 200, prefer: 'wait=1' }, // element 2 is due, served 30 ms after: held until then
      { atMs: 1_500, status: 200, prefer: 'wait=1' },
      { atMs: 2_500, status: 200, prefer: 'wait=1' },
      { atMs: 3_500, status: 200, prefer: 'wait=1' },
    ]);
  });

  it('from a publisher that does not hold, stops asking to be held after the second answer at once, backs off from minPollIntervalMs and learns the margin', async () => {
    expect(await pollFive(false)).toEqual([
      { atMs: 0, status: 200 },
      { atMs: 500, status: 304, prefer: 'wait=1' }, // answered at once: not held
      { atMs: 500, status: 304, prefer: 'wait=1' }, // asked again at once, answered at once again: the publisher does not hold
      { atMs: 700, status: 200 }, // unheld from now on, backing off (2 × minPollIntervalMs); the margin becomes 20 ms
      { atMs: 1_520, status: 304 }, // element 3: due + 20 ms, still 10 ms early
      { atMs: 1_620, status: 200 }, // minPollIntervalMs later; the margin doubles: 40 ms
      { atMs: 2_540, status: 200 }, // found at the first request from now on; the margin shrinks by 5 %
      { atMs: 3_538, status: 200 },
    ]);
  });
});

describe('pollTransport, smart, on an irregular stream', () => {
  it('asks again when the cached answer stops being fresh, and hands over an element once', async () => {
    const requests: number[] = [];
    let etag = '"a"';
    const fetchImpl: typeof fetch = async (_input, init) => {
      requests.push(Date.now() - T0);
      const headers = { etag, 'cache-control': 'max-age=2', date: new Date().toUTCString(), 'content-type': 'text/turtle' };
      if (new Headers(init?.headers).get('if-none-match') === etag) return new Response(null, { status: 304, headers });
      return new Response(`element ${etag}`, { status: 200, headers });
    };
    const stop = new AbortController();
    const stats = emptyStats();
    const transport = smartTransport(fetchImpl, { expectedIntervalMs: null }, stop.signal, stats);
    const elements: string[] = [];
    const consuming = (async () => {
      for await (const event of transport) if (event.type === 'element') elements.push(event.text);
    })();
    await vi.advanceTimersByTimeAsync(4_500);
    etag = '"b"';
    await vi.advanceTimersByTimeAsync(2_000);
    stop.abort();
    await vi.advanceTimersByTimeAsync(2_000);
    await consuming;
    expect(requests).toEqual([0, 2_000, 4_000, 6_000]);
    expect(elements).toEqual(['element "a"', 'element "b"']);
    expect(stats).toMatchObject({ requests: 4, notModified: 2, elements: 2 });
  });
});

describe('pollTransport, while it waits', () => {
  it('keeps nothing of the last answer: its Response can be collected before the next request', async () => {
    vi.useRealTimers();
    // A full collection on demand (as `node --expose-gc` gives it), to see what is still reachable.
    setFlagsFromString('--expose-gc');
    const collectGarbage = runInNewContext('gc') as () => void;
    const answers: Array<WeakRef<Response>> = [];
    const fetchImpl: typeof fetch = async () => {
      const response = new Response('element 1', { status: 200, headers: { etag: '"a"', 'cache-control': 'max-age=60', 'content-type': 'text/turtle' } });
      answers.push(new WeakRef(response));
      return response;
    };
    const stop = new AbortController();
    // The fixed strategy with a fresh cached answer: the transport waits a minute before asking again.
    const transport = pollTransport('http://publisher.test/streams/s/latest', {
      format: 'turtle',
      strategy: 'fixed',
      pollIntervalMs: 60_000,
      jitterMs: 0,
      minPollIntervalMs: 100,
      backoff: { initialDelayMs: 1_000, maxDelayMs: 30_000 },
      stats: emptyStats(),
      signal: stop.signal,
      fetch: fetchImpl,
    });
    const first = await transport.next();
    expect(first.value).toMatchObject({ type: 'element', text: 'element 1' });
    // Resumed, the transport runs until it waits for the next request (the delay's timer).
    const next = transport.next();
    let kept: unknown[];
    try {
      // A WeakRef's target stays alive until the job that made it ends: collect in a later one.
      await new Promise((resolve) => setImmediate(resolve));
      collectGarbage();
      kept = answers.map((answer) => answer.deref());
    } finally {
      stop.abort();
    }
    expect(await next).toEqual({ done: true, value: undefined });
    expect(kept).toEqual([undefined]);
  });
});
