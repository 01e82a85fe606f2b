import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { EventSource } from 'eventsource';
import { createClient, type RedisClientType } from '@redis/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryEventLog } from '../../src/log/memory-event-log.js';
import { ChannelStoreUnavailableError } from '../../src/publish/notifications/channel-store.js';
import { NotificationChannels } from '../../src/publish/notifications/notification-channels.js';
import type { SubscriptionRequest } from '../../src/publish/notifications/notification-request.js';
import { RedisChannelStore } from '../../src/publish/notifications/redis-channel-store.js';
import { startTestPublisher, type TestPublisher } from '../../src/testing.js';
import { FakeSink } from '../support/fake-sink.js';
import { loggedElement } from '../support/logged-element.js';
import { PrivateRedis } from '../support/private-redis.js';
import { readProblem } from '../support/problem.js';
import { openWs, UpgradeRefused } from '../support/ws-client.js';

type RedisClient = RedisClientType;

/** A client as the composition root would hold it: connected, reconnecting on its own, its errors logged (here: kept). */
async function connectedClient(redis: PrivateRedis): Promise<RedisClient> {
  const client = createClient({ url: redis.url });
  client.on('error', () => {});
  await client.connect();
  return client;
}

let redis: PrivateRedis;
let client: RedisClient;
beforeAll(async () => {
  redis = await PrivateRedis.start();
  client = await connectedClient(redis);
});
afterAll(async () => {
  client.destroy();
  await redis.close();
});

const streamIri = 'http://127.0.0.1:8080/streams/parking';
/** The states of the notifications a sink received. */
const states = (sink: FakeSink) =>
  sink.received.flatMap((text) => [...text.matchAll(/^data: (.*)$/gm)].map((match) => (JSON.parse(match[1]!) as { state: string }).state));

/**
 * Publisher instances as the shared log makes them: each has its own log, which announces the
 * same elements (`append` appends to all of them), and its own `NotificationChannels` on one
 * Redis under one key prefix.
 */
function cluster(maxNotificationChannels = 100, redisClient = client) {
  const prefix = `test-${randomBytes(6).toString('hex')}`;
  const logs: MemoryEventLog[] = [];
  const appended: number[] = [];
  const errors: unknown[] = [];
  /** A new instance, its log holding what the shared log holds (as one started later, or restarted, reads it). */
  const instance = async () => {
    const log = new MemoryEventLog(100, { retainedElements: 1000, retainedSeconds: 0 }, { epoch: 'testepoch' });
    for (const seq of appended) await log.append(loggedElement(seq));
    logs.push(log);
    return new NotificationChannels({
      logs: new Map([['parking', log]]),
      limits: { maxNotificationChannels, maxSubscriberQueueBytes: 64 * 1024, subscriberStallTimeoutMs: 10_000 },
      onError: (error) => errors.push(error),
      store: new RedisChannelStore(redisClient, prefix),
    });
  };
  const append = async (seq: number) => {
    appended.push(seq);
    for (const log of logs) await log.append(loggedElement(seq));
  };
  const request = (extra: Partial<SubscriptionRequest> = {}): SubscriptionRequest => ({
    topic: { iri: streamIri, streamId: 'parking', kind: 'stream' },
    endAtMs: Date.now() + 60_000,
    ...extra,
  });
  return { instance, append, request, errors };
}

describe('NotificationChannels sharing one Valkey', () => {
  it('serves a channel created on one instance from another, from its own log', async () => {
    const { instance, append, request } = cluster();
    const a = await instance();
    const b = await instance();
    await append(1);
    const channel = (await a.open(request()))!;
    const onB = await b.get(channel.id);
    expect(onB).toEqual(channel);
    const sink = new FakeSink();
    expect(b.connect(onB!, sink)).toBe(true);
    await append(2);
    expect(states(sink)).toEqual(['testepoch-2']);
  });

  it('keeps a channel and its receiver\'s state across a restart of every instance', async () => {
    const { instance, append, request } = cluster();
    const before = await instance();
    await append(1);
    const channel = (await before.open(request({ state: 'testepoch-0' })))!;
    const first = new FakeSink();
    before.connect((await before.get(channel.id))!, first);
    expect(states(first)).toEqual(['testepoch-1']);
    await append(2);
    // Shutdown ends the connection and stores what its receiver was told last.
    await before.closeAll(() => 1_000);
    expect(first.ended).toBe(true);

    const after = await instance();
    const restored = await after.get(channel.id);
    expect(restored).toMatchObject({ id: channel.id, knownState: 'testepoch-2' });
    const second = new FakeSink();
    after.connect(restored!, second);
    expect(states(second)).toEqual([]);
    await append(3);
    expect(states(second)).toEqual(['testepoch-3']);
  });

  it('keeps maxNotificationChannels across instances', async () => {
    const { instance, request } = cluster(2);
    const a = await instance();
    const b = await instance();
    expect(await a.open(request())).toBeDefined();
    expect(await b.open(request())).toBeDefined();
    expect(await a.open(request())).toBeUndefined();
    expect(await b.open(request())).toBeUndefined();
  });

  it('ends a channel at endAt on the instance that holds its connection, and for every other', async () => {
    const { instance, request } = cluster(1);
    const a = await instance();
    const b = await instance();
    const channel = (await a.open(request({ endAtMs: Date.now() + 300 })))!;
    const sink = new FakeSink();
    b.connect((await b.get(channel.id))!, sink);
    await once(sink, 'close');
    expect(sink.received.join('')).toContain(': channel ended (endAt)');
    expect(await a.get(channel.id)).toBeUndefined();
    expect(await a.open(request())).toBeDefined();
  });

  it('closes the connection of a channel deleted on another instance at its next heartbeat', async () => {
    const { instance, request } = cluster();
    const a = await instance();
    const b = await instance();
    const channel = (await a.open(request()))!;
    const sink = new FakeSink();
    b.connect((await b.get(channel.id))!, sink);
    const kept = new FakeSink();
    b.connect((await b.get((await a.open(request()))!.id))!, kept);
    expect(await a.delete(channel.id)).toBe(true);
    expect(sink.ended).toBe(false);
    await b.heartbeat();
    expect(sink.ended).toBe(true);
    expect(kept.ended).toBe(false);
    expect(await b.get(channel.id)).toBeUndefined();
  });

  it('refuses new channels while Valkey is down, and keeps the open connections open', async () => {
    const own = await PrivateRedis.start();
    const ownClient = await connectedClient(own);
    try {
      const { instance, append, request } = cluster(100, ownClient);
      const a = await instance();
      const b = await instance();
      const channel = (await a.open(request()))!;
      const sink = new FakeSink();
      b.connect((await b.get(channel.id))!, sink);
      await own.kill();
      await expect(a.open(request())).rejects.toBeInstanceOf(ChannelStoreUnavailableError);
      await expect(a.get(channel.id)).rejects.toBeInstanceOf(ChannelStoreUnavailableError);
      await expect(b.heartbeat()).rejects.toBeInstanceOf(ChannelStoreUnavailableError);
      await append(1);
      expect(sink.ended).toBe(false);
      expect(states(sink)).toEqual(['testepoch-1']);
      // Back with its data: the channel is there for every instance.
      // Not `once(…)`, which rejects at the client's first failed reconnection ('error').
      const ready = new Promise((resolve) => ownClient.once('ready', resolve));
      await own.restart();
      await ready;
      expect(await a.get(channel.id)).toMatchObject({ id: channel.id });
      await b.heartbeat();
      expect(sink.ended).toBe(false);
    } finally {
      ownClient.destroy();
      await own.close();
    }
  });
});

describe('Two publishers sharing their notification channels through one Valkey, over HTTP', () => {
  const CONTEXT = 'https://www.w3.org/ns/solid/notification/v1';
  const running: TestPublisher[] = [];
  const sources: EventSource[] = [];
  afterEach(async () => {
    for (const source of sources.splice(0)) source.close();
    for (const publisher of running.splice(0)) await publisher.close();
  });

  async function twoPublishers(redisClient = client) {
    const prefix = `test-${randomBytes(6).toString('hex')}`;
    for (let index = 0; index < 2; index++) {
      running.push(await startTestPublisher({ channelStore: new RedisChannelStore(redisClient, prefix), flags: ['--sse-retry-ms', '20'] }));
    }
    return running as [TestPublisher, TestPublisher];
  }

  const subscribe = (publisher: TestPublisher) =>
    fetch(`${publisher.url}/notifications/eventsource`, {
      method: 'POST',
      headers: { 'content-type': 'application/ld+json' },
      body: JSON.stringify({ '@context': [CONTEXT], type: 'EventSourceChannel2023', topic: `${publisher.url}/streams/parking` }),
    });

  /** A channel's description, subscribed to on `publisher`. */
  async function channelOn(publisher: TestPublisher): Promise<{ receiveFrom: string }> {
    const answer = await subscribe(publisher);
    if (answer.status !== 200) throw new Error(`subscription answered ${answer.status}: ${await answer.text()}`);
    return (await answer.json()) as { receiveFrom: string };
  }

  /** Behind one load balancer both would answer at one base URL: here, the channel's path at `publisher`. */
  const at = (publisher: TestPublisher, receiveFrom: string) => `${publisher.url}${new URL(receiveFrom).pathname}`;

  async function listen(url: string) {
    const source = new EventSource(url);
    sources.push(source);
    const states: string[] = [];
    let wake = () => {};
    source.onmessage = (event) => {
      states.push((JSON.parse(event.data as string) as { state: string }).state);
      wake();
    };
    await new Promise((resolve, reject) => {
      source.onopen = resolve;
      source.onerror = reject;
    });
    const received = async (count: number) => {
      while (states.length < count) await new Promise<void>((resolve) => (wake = resolve));
      return states.slice(0, count);
    };
    return { source, received };
  }

  it('subscribes on one, receives on the other, and unsubscribes on either', async () => {
    const [a, b] = await twoPublishers();
    const channel = await channelOn(a);
    const listener = await listen(at(b, channel.receiveFrom));
    await b.push();
    expect(await listener.received(1)).toEqual([`${b.hub.log.epoch}-1`]);

    // Unsubscribed where the receiver listens: its stream ends at once, and its reconnection is refused.
    const closed = new Promise<void>((resolve) => {
      listener.source.onerror = () => {
        if (listener.source.readyState === EventSource.CLOSED) resolve();
      };
    });
    const deleted = await fetch(at(b, channel.receiveFrom), { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    await closed;
    // Gone for the other publisher too.
    const again = await fetch(at(a, channel.receiveFrom), { method: 'DELETE' });
    expect([again.status, (await readProblem(again)).code]).toEqual([404, 'PUB_ERR_NOTIFICATION_CHANNEL_NOT_FOUND']);
    const gone = await fetch(at(a, channel.receiveFrom));
    expect([gone.status, (await readProblem(gone)).code]).toEqual([404, 'PUB_ERR_NOTIFICATION_CHANNEL_NOT_FOUND']);
  });

  it('answers a subscription 503 PUB_ERR_NOTIFICATION_STORE_UNAVAILABLE with Retry-After while Valkey is down; an open receiver stays open', async () => {
    const own = await PrivateRedis.start();
    const ownClient = await connectedClient(own);
    try {
      const [a, b] = await twoPublishers(ownClient);
      const channel = await channelOn(a);
      const listener = await listen(at(b, channel.receiveFrom));
      const webSocketChannel = (await (
        await fetch(`${a.url}/notifications/websocket`, {
          method: 'POST',
          headers: { 'content-type': 'application/ld+json' },
          body: JSON.stringify({ '@context': [CONTEXT], type: 'WebSocketChannel2023', topic: `${a.url}/streams/parking` }),
        })
      ).json()) as { receiveFrom: string };
      await own.kill();
      const refused = await subscribe(a);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe(String(a.config.pressureRetryAfterSeconds));
      const problem = await readProblem(refused);
      expect(problem.code).toBe('PUB_ERR_NOTIFICATION_STORE_UNAVAILABLE');
      expect(JSON.stringify(problem)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1:\d+|at .*\.js/);
      await b.push();
      expect(await listener.received(1)).toEqual([`${b.hub.log.epoch}-1`]);
      expect(listener.source.readyState).toBe(EventSource.OPEN);
      // An EventSource arriving now is told to come back, not refused (it would give up).
      const arriving = await fetch(at(a, channel.receiveFrom));
      expect(arriving.status).toBe(200);
      expect(await arriving.text()).toMatch(/^retry: \d+$/m);
      // A WebSocket receiver is refused before the upgrade, as the subscription is.
      const upgrade = (await openWs(webSocketChannel.receiveFrom).catch((error: unknown) => error)) as UpgradeRefused;
      expect(upgrade).toBeInstanceOf(UpgradeRefused);
      expect([upgrade.status, upgrade.problem.code]).toEqual([503, 'PUB_ERR_NOTIFICATION_STORE_UNAVAILABLE']);
    } finally {
      for (const source of sources.splice(0)) source.close();
      for (const publisher of running.splice(0)) await publisher.close();
      ownClient.destroy();
      await own.close();
    }
  });
});
