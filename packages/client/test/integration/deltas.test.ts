import { Parser } from 'n3';
import { isomorphic } from 'rdf-isomorphic';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DeltaEvent, PatchEvent, SnapshotEvent } from '../../src/decode/delta-feed.js';
import { subscribe } from '../../src/subscribe.js';
import { startTestPublisher, type TestPublisher } from '@rdf-stream/publisher/testing';

let running: TestPublisher | undefined;
let stop: AbortController;
afterEach(async () => {
  stop?.abort();
  await running?.close();
  running = undefined;
});

const fastBackoff = { initialDelayMs: 20, maxDelayMs: 100 };
const epochOf = (publisher: TestPublisher) => publisher.hub.log.epoch;

/** `/latest` as N-Triples once it serves element `id` (it follows the broadcast by a moment). */
async function latestOf(streamUrl: string, id: string) {
  return vi.waitFor(async () => {
    const response = await fetch(`${streamUrl}/latest`, { headers: { accept: 'application/n-triples' } });
    const text = await response.text();
    if (!(response.headers.get('etag') ?? '').startsWith(`"${id}-`)) throw new Error(`/latest is not ${id} yet`);
    return new Parser({ format: 'N-Triples' }).parse(text);
  }, { timeout: 10_000 });
}

/** `/elements/{id}` as N-Triples: what `/latest` served while `id` was the newest element. */
async function elementOf(streamUrl: string, id: string) {
  const response = await fetch(`${streamUrl}/elements/${id}`, { headers: { accept: 'application/n-triples' } });
  expect(response.status).toBe(200);
  return new Parser({ format: 'N-Triples' }).parse(await response.text());
}

/** Runs the subscription in the background; `until(check)` resolves once the events satisfy it. */
function collect(iterable: AsyncIterable<DeltaEvent>) {
  const events: DeltaEvent[] = [];
  const snapshots: Array<ReturnType<typeof storeContents>> = [];
  let failure: unknown;
  const waiters: Array<() => void> = [];
  void (async () => {
    try {
      for await (const event of iterable) {
        events.push(event);
        // The store changes with the next event: keep what it held after this one.
        snapshots.push(storeContents(event));
        for (const wake of waiters.splice(0)) wake();
      }
    } catch (error) {
      failure = error;
      for (const wake of waiters.splice(0)) wake();
    }
  })();
  return {
    events,
    snapshots,
    until: (check: () => boolean) =>
      new Promise<void>((resolve, reject) => {
        const test = () => {
          if (failure !== undefined) reject(failure);
          else if (check()) resolve();
          else waiters.push(test);
        };
        test();
      }),
  };
}

const storeContents = (event: DeltaEvent) => ('store' in event ? [...event.store] : []);

const patchesOf = (events: readonly DeltaEvent[]) => events.filter((event): event is PatchEvent => event.type === 'patch');

describe('subscribe(stream, { deltas: true })', () => {
  it('reads the snapshot, then keeps a local store equal to /latest after every patch', async () => {
    running = await startTestPublisher();
    stop = new AbortController();
    await running.push([1, 2]);
    const subscription = subscribe(running.streamUrl, { deltas: true, signal: stop.signal, backoff: fastBackoff });
    const feed = collect(subscription);
    await feed.until(() => feed.events.some((event) => event.type === 'snapshot'));
    expect(feed.events[0]).toMatchObject({ type: 'snapshot', id: `${epochOf(running)}-1`, element: `${running.streamUrl}/elements/${epochOf(running)}-1` });
    expect(isomorphic(feed.snapshots[0]!, await latestOf(running.streamUrl, `${epochOf(running)}-1`))).toBe(true);
    await running.untilSubscribers(1);
    for (const values of [[1, 5], [7, 8, 9], [4]]) {
      const seq = await running.push(values);
      const id = `${epochOf(running)}-${seq}`;
      await feed.until(() => patchesOf(feed.events).some((patch) => patch.id === id));
      expect(isomorphic(feed.snapshots.at(-1)!, await latestOf(running.streamUrl, id))).toBe(true);
    }
    expect(feed.events.map((event) => event.type)).toEqual(['snapshot', 'patch', 'patch', 'patch']);
    const last = patchesOf(feed.events).at(-1)!;
    expect(last.generatedAt).toBeInstanceOf(Date);
    expect(last.added.some((q) => q.object.value === '4')).toBe(true);
    expect(subscription.store.size).toBe(feed.snapshots.at(-1)!.length);
  });

  it('reads the snapshot again when a patch does not follow the element it holds (a lost patch)', async () => {
    running = await startTestPublisher();
    stop = new AbortController();
    await running.push([1]);
    const epoch = epochOf(running);
    let latestReads = 0;
    // The first /patches connection loses the event of element 3, as a faulty relay would.
    let dropping = true;
    const lossyFetch: typeof fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (url.includes('/latest')) latestReads++;
      const response = await fetch(input, init);
      if (!url.includes('/patches') || !dropping || response.body === null) return response;
      dropping = false;
      return new Response(response.body.pipeThrough(new TextDecoderStream()).pipeThrough(withoutEvent(`id: ${epoch}-3`)).pipeThrough(new TextEncoderStream()), {
        status: response.status,
        headers: response.headers,
      });
    };
    const feed = collect(subscribe(running.streamUrl, { deltas: true, signal: stop.signal, backoff: fastBackoff, fetch: lossyFetch }));
    await feed.until(() => feed.events.some((event) => event.type === 'snapshot'));
    await running.untilSubscribers(1);
    await running.push([2]);
    await running.push([3]);
    await running.push([4]);
    await feed.until(() => feed.events.some((event) => event.type === 'gap'));
    expect(feed.events.find((event) => event.type === 'gap')).toMatchObject({
      type: 'gap',
      reason: 'prev-mismatch',
      held: `${running.streamUrl}/elements/${epoch}-2`,
      prev: `${running.streamUrl}/elements/${epoch}-3`,
    });
    await feed.until(() => feed.events.filter((event) => event.type === 'snapshot').length === 2);
    expect(latestReads).toBe(2);
    // The snapshot read again is of element 4, or of 3 if /latest had not caught up yet (then patch 4 follows).
    const second = feed.events.filter((event): event is SnapshotEvent => event.type === 'snapshot')[1]!;
    expect([`${epoch}-3`, `${epoch}-4`]).toContain(second.id);
    expect(isomorphic(feed.snapshots[feed.events.indexOf(second)]!, await elementOf(running.streamUrl, second.id!))).toBe(true);
    // And patches apply again from there, on a new connection that resumed after element 4.
    await running.untilSubscribers(1);
    const seq = await running.push([5]);
    await feed.until(() => patchesOf(feed.events).some((patch) => patch.id === `${epoch}-${seq}`));
    expect(isomorphic(feed.snapshots.at(-1)!, await latestOf(running.streamUrl, `${epoch}-${seq}`))).toBe(true);
  });
});

/** Passes an SSE text stream through, leaving out the event that holds `line`. */
function withoutEvent(line: string): TransformStream<string, string> {
  let buffered = '';
  return new TransformStream({
    transform(chunk, controller) {
      buffered += chunk;
      let end;
      while ((end = buffered.indexOf('\n\n')) !== -1) {
        const event = buffered.slice(0, end + 2);
        buffered = buffered.slice(end + 2);
        if (!event.split('\n').includes(line)) controller.enqueue(event);
      }
    },
    flush(controller) {
      controller.enqueue(buffered);
    },
  });
}
