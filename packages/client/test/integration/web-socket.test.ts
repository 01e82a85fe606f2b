import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { subscribe } from '../../src/subscribe.js';
import { SubscriptionError } from '../../src/transport/subscription-error.js';
import type { TransportEvent } from '../../src/transport/transport-event.js';
import { emptyStats } from '../../src/transport/transport-stats.js';
import type { OpenWebSocket, WebSocketEnd } from '../../src/transport/web-socket-connection.js';
import { webSocketTransport } from '../../src/transport/web-socket-transport.js';
import { loadWebSocket } from '#open-web-socket';
import { collect } from '../support/collect.js';
import { startTestPublisher, type TestPublisher } from '@rdf-stream/publisher/testing';
import { TcpRelay } from '../support/tcp-relay.js';

/** For state no event announces: checked every 10 ms, with a deadline for a broken server, not a measure of speed. */
const patience = { timeout: 30_000, interval: 10 };

/**
 * The WebSocket transport against the real publisher's data WebSocket on real sockets (on
 * Node 20 through the `ws` package, the platform's default here).
 */
let running: TestPublisher[] = [];
let relay: TcpRelay | undefined;
let stop: AbortController;
const dataDirs: string[] = [];
afterEach(async () => {
  stop?.abort();
  await relay?.close();
  relay = undefined;
  for (const publisher of running) await publisher.close().catch(() => undefined);
  running = [];
  for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const fastBackoff = { initialDelayMs: 20, maxDelayMs: 100 };
const epochOf = (publisher: TestPublisher) => publisher.hub.log.epoch;

async function start(flags: readonly string[] = [], port?: number): Promise<TestPublisher> {
  const publisher = await startTestPublisher({ flags, port });
  running.push(publisher);
  return publisher;
}

/** The platform's WebSocket, with the way each connection ended recorded. */
async function recordingWebSocket(): Promise<{ open: OpenWebSocket; ends: WebSocketEnd[] }> {
  const platform = await loadWebSocket();
  const ends: WebSocketEnd[] = [];
  const open: OpenWebSocket = (url, listener) =>
    platform(url, {
      ...listener,
      opened: () => listener.opened(),
      message: (text) => listener.message(text),
      ended: (end) => {
        ends.push(end);
        listener.ended(end);
      },
    });
  return { open, ends };
}

/** Consumes raw transport events in the background. */
function consume(events: AsyncGenerator<TransportEvent>) {
  const received: TransportEvent[] = [];
  let failure: unknown;
  const done = (async () => {
    try {
      for await (const event of events) received.push(event);
    } catch (error) {
      failure = error;
    }
  })();
  return { received, done, failure: () => failure };
}

describe('subscribe over the data WebSocket', () => {
  it('receives pushed elements in order with their quads, sequence numbers, transport and latency', async () => {
    const publisher = await start();
    stop = new AbortController();
    const subscription = subscribe(publisher.streamUrl, { transport: 'websocket', format: 'jsonld', signal: stop.signal, backoff: fastBackoff });
    const collected = collect(subscription);
    await publisher.untilSubscribers(1);
    for (let index = 0; index < 3; index++) await publisher.push([index, index + 1]);
    await collected.next(3);
    const updates = collected.updates();
    expect(updates.map((update) => update.seq)).toEqual([1, 2, 3]);
    expect(updates[0]!.quads).toHaveLength(1 + 2 * 6);
    for (const update of updates) {
      expect(update.transport).toBe('websocket');
      expect(update.latencyMs).toBeGreaterThanOrEqual(-5);
      expect(update.latencyMs).toBeLessThan(5_000);
    }
    expect(subscription.transport).toBe('websocket');
    expect(subscription.stats).toMatchObject({ requests: 1, elements: 3, reconnects: 0 });
  });

  it('resumes after the network cuts the connection, with no gap and no duplicate', async () => {
    const publisher = await start();
    relay = await TcpRelay.start(Number(new URL(publisher.streamUrl).port));
    const through = publisher.streamUrl.replace(/:\d+\//, `:${relay.port}/`);
    stop = new AbortController();
    const collected = collect(subscribe(through, { transport: 'websocket', signal: stop.signal, backoff: fastBackoff, clockOffset: false }));
    await publisher.untilSubscribers(1);
    await publisher.push();
    await publisher.push();
    await collected.next(2);
    relay.down = true;
    relay.cut();
    // Published while the client is away: it must get them when it resumes.
    await publisher.untilSubscribers(0);
    await publisher.push();
    await publisher.push();
    await collected.until(() => collected.events.some((event) => event.type === 'reconnect'));
    relay.down = false;
    await collected.next(4);
    await publisher.push();
    await collected.next(5);
    expect(collected.updates().map((update) => update.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(collected.events.filter((event) => event.type === 'gap')).toEqual([]);
    expect(collected.events.find((event) => event.type === 'reconnect')).toMatchObject({ reason: 'connection lost' });
  });

  it('resumes with no gap and no duplicate after the server evicts it as a slow reader (4008)', async () => {
    const publisher = await start();
    // The publisher's own subscriber objects, as it adds them, so that the test can evict one.
    const broadcaster = publisher.hub.broadcaster;
    const added: Array<Parameters<typeof broadcaster.add>[0]> = [];
    const add = broadcaster.add.bind(broadcaster);
    broadcaster.add = (subscriber) => {
      added.push(subscriber);
      add(subscriber);
    };
    stop = new AbortController();
    const collected = collect(subscribe(publisher.streamUrl, { transport: 'websocket', signal: stop.signal, backoff: fastBackoff, clockOffset: false }));
    await publisher.untilSubscribers(1);
    await publisher.push();
    await collected.next(1);
    const evicted = added[0]!;
    expect(evicted.transport).toBe('websocket');
    evicted.evict('queue');
    await publisher.push();
    await collected.until(() => collected.events.some((event) => event.type === 'reconnect'));
    await collected.next(2);
    await publisher.push();
    await collected.next(3);
    expect(collected.updates().map((update) => update.seq)).toEqual([1, 2, 3]);
    expect(collected.events.filter((event) => event.type === 'gap')).toEqual([]);
    expect(collected.events.find((event) => event.type === 'reconnect')).toMatchObject({ reason: 'evicted by the server (queue)' });
    expect(added).toHaveLength(2);
  });

  it("reports the server's gap when the id it resumes from has expired, then every retained element", async () => {
    const publisher = await start(['--retained-elements', '2', '--page-elements', '1']);
    for (let index = 0; index < 5; index++) await publisher.push();
    stop = new AbortController();
    const collected = collect(subscribe(publisher.streamUrl, { transport: 'websocket', lastEventId: `${epochOf(publisher)}-1`, signal: stop.signal }));
    await collected.next(2);
    expect(collected.events[0]).toEqual({ type: 'gap', afterSeq: 1, resumedAtSeq: 4, reason: 'expired' });
    expect(collected.updates().map((update) => update.seq)).toEqual([4, 5]);
  });

  it("reports the server's epoch gap when it resumes from an id of another life of the log", async () => {
    const publisher = await start();
    for (let index = 0; index < 3; index++) await publisher.push();
    stop = new AbortController();
    const epoch = epochOf(publisher);
    const lastEventId = `${epoch.startsWith('a') ? 'b' : 'a'}${epoch.slice(1)}-2`;
    const collected = collect(subscribe(publisher.streamUrl, { transport: 'websocket', lastEventId, signal: stop.signal }));
    await collected.next(3);
    expect(collected.events[0]).toEqual({ type: 'gap', afterSeq: undefined, resumedAtSeq: 1, reason: 'epoch' });
    expect(collected.updates().map((update) => update.seq)).toEqual([1, 2, 3]);
  });

  it('says `epoch` when the publisher it resumes on has lost its log, and goes on with the new one', async () => {
    const first = await start();
    stop = new AbortController();
    const collected = collect(subscribe(first.streamUrl, { transport: 'websocket', signal: stop.signal, backoff: fastBackoff, clockOffset: false }));
    await first.untilSubscribers(1);
    await first.push();
    await first.push();
    await collected.next(2);
    // The same port, a fresh memory log: another life of the stream, numbered from 1 again.
    const port = Number(new URL(first.streamUrl).port);
    running = running.filter((publisher) => publisher !== first);
    await first.close();
    const second = await start([], port);
    await second.push();
    await collected.until(() => collected.events.some((event) => event.type === 'gap'));
    await collected.next(3);
    await second.untilSubscribers(1);
    await second.push();
    await collected.next(4);
    // (`resumedAtSeq` is 1, or unknown when the client came back before the new log held anything.)
    expect(collected.events.filter((event) => event.type === 'gap')).toMatchObject([{ type: 'gap', afterSeq: undefined, reason: 'epoch' }]);
    expect(collected.updates().map((update) => update.seq)).toEqual([1, 2, 1, 2]);
  });

  it('replays the history, then resumes live over the WebSocket with no gap and no duplicate', async () => {
    const publisher = await start();
    for (let index = 0; index < 4; index++) await publisher.push();
    stop = new AbortController();
    const collected = collect(subscribe(publisher.streamUrl, { transport: 'websocket', from: 2, signal: stop.signal }));
    await collected.next(3);
    await publisher.untilSubscribers(1);
    await publisher.push();
    await collected.next(4);
    expect(collected.updates().map((update) => [update.seq, update.replayed])).toEqual([
      [2, true],
      [3, true],
      [4, true],
      [5, false],
    ]);
  });

  it.each([
    ['an unknown stream', (url: string) => url.replace(/parking$/, 'nope'), {}, 404, 'PUB_ERR_STREAM_NOT_FOUND'],
    ['a malformed lastEventId', (url: string) => url, { lastEventId: 'not an id' }, 400, 'PUB_ERR_INVALID_EVENT_ID'],
  ])('throws SubscriptionError with the problem of the refused upgrade for %s, without retrying', async (_case, urlOf, extra, status, code) => {
    const publisher = await start();
    const subscription = subscribe(urlOf(publisher.streamUrl), { transport: 'websocket', clockOffset: false, ...extra });
    const error = await subscription[Symbol.asyncIterator]()
      .next()
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(error).toBeInstanceOf(SubscriptionError);
    expect(error).toMatchObject({ status, problem: { code } });
    expect(subscription.stats.requests).toBe(1);
  });
});

describe("the data WebSocket's close codes", () => {
  const transportOptions = (open: OpenWebSocket, signal: AbortSignal) => ({
    format: 'turtle' as const,
    // Deterministic and long: a reconnection that waited for the backoff instead of the server's retryMs would show.
    backoff: { initialDelayMs: 20_000, maxDelayMs: 20_000, random: () => 1 },
    maxEventBytes: 4 * 1024 * 1024,
    stats: emptyStats(),
    openWebSocket: open,
    signal,
  });

  it('shutdown (1012): reconnects after the retryMs of the close, and resumes on the restarted publisher with no gap', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'client-ws-restart-'));
    dataDirs.push(dataDir);
    const flags = ['--log', 'file', '--data-dir', dataDir, '--shutdown-retry-jitter-ms', '1500'];
    const first = await start(flags);
    const port = Number(new URL(first.streamUrl).port);
    const { open, ends } = await recordingWebSocket();
    stop = new AbortController();
    const consumed = consume(webSocketTransport(`${first.streamUrl}/ws`, transportOptions(open, stop.signal)));
    await first.untilSubscribers(1);
    await first.push();
    await first.push();
    await vi.waitUntil(() => consumed.received.length === 2, patience);
    const restarting = first.close();
    running = running.filter((publisher) => publisher !== first);
    await restarting;
    const second = await start(flags, port);
    await vi.waitUntil(() => consumed.received.some((event) => event.type === 'reconnect'), patience);
    const reconnect = consumed.received.find((event) => event.type === 'reconnect');
    expect(ends[0]).toMatchObject({ code: 1012, opened: true });
    const { retryMs } = JSON.parse(ends[0]!.reason) as { retryMs: number };
    expect(reconnect).toEqual({ type: 'reconnect', reason: 'the server is restarting', delayMs: retryMs });
    await second.untilSubscribers(1);
    await second.push();
    await vi.waitUntil(() => consumed.received.filter((event) => event.type === 'element').length === 3, { timeout: 30_000, interval: 10 });
    const ids = consumed.received.flatMap((event) => (event.type === 'element' ? [event.id] : []));
    expect(ids).toEqual([1, 2, 3].map((seq) => `${epochOf(second)}-${seq}`));
    expect(consumed.received.filter((event) => event.type === 'gap')).toEqual([]);
  });

  it('shed (1013, maxSubscribers reached): reconnects after the retryMs of the close, and gets in once there is room', async () => {
    const publisher = await start(['--max-subscribers', '1']);
    const occupant = new AbortController();
    const first = collect(subscribe(publisher.streamUrl, { transport: 'sse', clockOffset: false, signal: occupant.signal }));
    await publisher.untilSubscribers(1);
    const { open, ends } = await recordingWebSocket();
    stop = new AbortController();
    const options = transportOptions(open, stop.signal);
    const consumed = consume(webSocketTransport(`${publisher.streamUrl}/ws`, options));
    await vi.waitUntil(() => consumed.received.some((event) => event.type === 'reconnect'), patience);
    expect(ends[0]).toMatchObject({ code: 1013, opened: true });
    const reason = JSON.parse(ends[0]!.reason) as { code: string; retryMs: number };
    expect(reason.code).toBe('PUB_ERR_OVERLOADED');
    expect(consumed.received[0]).toEqual({ type: 'reconnect', reason: 'shed by the server', delayMs: reason.retryMs });
    occupant.abort();
    await first.done;
    await publisher.untilSubscribers(0);
    // The next attempt (each one shed while the SSE subscriber was there comes after its own retryMs) is let in.
    await publisher.untilSubscribers(1);
    expect(options.stats.requests).toBe(ends.length + 1);
    expect(consumed.received.filter((event) => event.type === 'reconnect')).toHaveLength(ends.length);
    await publisher.push();
    await vi.waitUntil(() => consumed.received.some((event) => event.type === 'element'), patience);
    expect(consumed.failure()).toBeUndefined();
  }, 90_000);

  it('policy violation (1008, the client sent a data message): ends with SubscriptionError and never reconnects', async () => {
    const publisher = await start();
    // A client that breaks the protocol: it sends a text message once connected (ws, as on Node 20).
    const rude: OpenWebSocket = (url, listener) => {
      const socket = new WebSocket(url);
      let opened = false;
      socket.on('open', () => {
        opened = true;
        listener.opened();
        socket.send('hello');
      });
      socket.on('message', (data, isBinary) => listener.message(isBinary ? null : String(data)));
      socket.on('error', () => undefined);
      socket.on('close', (code, reason) => listener.ended({ code, reason: reason.toString(), opened }));
      return { close: () => socket.close() };
    };
    stop = new AbortController();
    const options = transportOptions(rude, stop.signal);
    const consumed = consume(webSocketTransport(`${publisher.streamUrl}/ws`, options));
    await consumed.done;
    expect(consumed.failure()).toBeInstanceOf(SubscriptionError);
    expect(consumed.failure()).toMatchObject({ status: 1008, problem: { code: 'PUB_ERR_WS_CLIENT_MESSAGE' } });
    expect(consumed.received).toEqual([]);
    expect(options.stats).toMatchObject({ requests: 1, reconnects: 0 });
  });
});
