import { describe, expect, it } from 'vitest';
import { MemoryEventLog } from '../../../../src/log/memory-event-log.js';
import { NotificationChannels } from '../../../../src/publish/notifications/notification-channels.js';
import type { SubscriptionRequest } from '../../../../src/publish/notifications/notification-request.js';
import { notificationObject } from '../../../../src/publish/notifications/solid-notification.js';
import { FakeSink } from '../../../support/fake-sink.js';
import { loggedElement } from '../../../support/logged-element.js';
import { manualClock } from '../../../../src/testing/manual-clock.js';
import { MemoryChannelStore } from '../../../../src/publish/notifications/memory-channel-store.js';

const streamIri = 'http://127.0.0.1:8080/streams/parking';

function setup(limits: { maxNotificationChannels?: number; maxSubscriberQueueBytes?: number; subscriberStallTimeoutMs?: number } = {}) {
  const log = new MemoryEventLog(100, { retainedElements: 1000, retainedSeconds: 0 }, { epoch: 'testepoch' });
  const time = manualClock();
  const errors: unknown[] = [];
  const options = {
    logs: new Map([['parking', log]]),
    limits: {
      maxNotificationChannels: limits.maxNotificationChannels ?? 10,
      maxSubscriberQueueBytes: limits.maxSubscriberQueueBytes ?? 64 * 1024,
      subscriberStallTimeoutMs: limits.subscriberStallTimeoutMs ?? 10_000,
    },
    onError: (error: unknown) => errors.push(error),
    clock: time.clock,
  };
  const store = new MemoryChannelStore(time.clock);
  const channels = new NotificationChannels({ ...options, store });
  /** A second instance on the same store and log, as a second publisher of a shared log would be. */
  const another = () => new NotificationChannels({ ...options, store });
  const append = (seq: number) => log.append(loggedElement(seq));
  const request = (extra: Partial<SubscriptionRequest> = {}): SubscriptionRequest => ({
    topic: { iri: streamIri, streamId: 'parking', kind: 'stream' },
    endAtMs: time.now() + 60_000,
    ...extra,
  });
  /** The states of the notifications a sink received. */
  const states = (sink: FakeSink) =>
    sink.received.flatMap((text) => [...text.matchAll(/^data: (.*)$/gm)].map((match) => (JSON.parse(match[1]!) as { state: string }).state));
  return { log, time, channels, another, append, request, states, errors };
}

describe('NotificationChannels', () => {
  it('writes one notification per durable element to each connected channel of the stream', async () => {
    const { channels, append, request, states } = setup();
    const sinks = [new FakeSink(), new FakeSink()];
    for (const sink of sinks) channels.connect((await channels.open(request()))!, sink);
    await append(1);
    await append(2);
    for (const sink of sinks) expect(states(sink)).toEqual(['testepoch-1', 'testepoch-2']);
  });

  it('state: notifies the current state on connection when the receiver has another, and elements appended before it connected', async () => {
    const { channels, append, request, states } = setup();
    await append(1);
    const stale = (await channels.open(request({ state: 'testepoch-0' })))!;
    const current = (await channels.open(request({ state: 'testepoch-1' })))!;
    const unannounced = (await channels.open(request()))!;
    await append(2);
    const sinks = [new FakeSink(), new FakeSink(), new FakeSink()];
    channels.connect(stale, sinks[0]!);
    channels.connect(current, sinks[1]!, 'testepoch-2');
    channels.connect(unannounced, sinks[2]!);
    expect(sinks.map(states)).toEqual([['testepoch-2'], [], ['testepoch-2']]);
  });

  it('rate: sends at once, then holds back all but the newest until the interval has passed', async () => {
    const { channels, append, request, states, time } = setup();
    const sink = new FakeSink();
    channels.connect((await channels.open(request({ rateMs: 1_000 })))!, sink);
    await append(1);
    await append(2);
    await append(3);
    expect(states(sink)).toEqual(['testepoch-1']);
    time.advanceBy(999);
    expect(states(sink)).toEqual(['testepoch-1']);
    time.advanceBy(1);
    expect(states(sink)).toEqual(['testepoch-1', 'testepoch-3']);
    time.advanceBy(5_000);
    await append(4);
    expect(states(sink)).toEqual(['testepoch-1', 'testepoch-3', 'testepoch-4']);
  });

  it('endAt: ends the connection and forgets the channel', async () => {
    const { channels, request, time } = setup();
    const sink = new FakeSink();
    const channel = (await channels.open(request({ endAtMs: time.now() + 500 })))!;
    channels.connect(channel, sink);
    time.advanceBy(500);
    expect(sink.ended).toBe(true);
    expect(await channels.get(channel.id)).toBeUndefined();
    expect(channels.connect(channel, new FakeSink())).toBe(false);
  });

  it('is bounded by maxNotificationChannels', async () => {
    const { channels, request } = setup({ maxNotificationChannels: 2 });
    expect(await channels.open(request())).toBeDefined();
    expect(await channels.open(request())).toBeDefined();
    expect(await channels.open(request())).toBeUndefined();
  });

  it('cuts a receiver whose unsent bytes would exceed maxSubscriberQueueBytes; the channel stays for its reconnection', async () => {
    const { channels, append, request } = setup({ maxSubscriberQueueBytes: 400 });
    const stalled = new FakeSink(false);
    const channel = (await channels.open(request()))!;
    channels.connect(channel, stalled);
    await append(1);
    await append(2);
    expect(stalled.destroyed).toBe(true);
    expect(await channels.get(channel.id)).toBeDefined();
  });

  it('cuts a receiver whose socket refuses data for subscriberStallTimeoutMs without draining, and keeps one that drains', async () => {
    const { channels, append, request, time } = setup({ subscriberStallTimeoutMs: 5_000 });
    const stalled = new FakeSink(false, 10);
    const slow = new FakeSink(false, 10);
    const stalledChannel = (await channels.open(request()))!;
    channels.connect(stalledChannel, stalled);
    channels.connect((await channels.open(request()))!, slow);
    await append(1);
    time.advanceBy(4_999);
    slow.drain();
    expect(stalled.destroyed).toBe(false);
    time.advanceBy(1);
    expect(stalled.destroyed).toBe(true);
    expect(slow.destroyed).toBe(false);
    expect(await channels.get(stalledChannel.id)).toBeDefined();
  });

  it('delete: ends the connection held here at once, and one held by another instance at its next heartbeat', async () => {
    const { channels, another, request } = setup();
    const elsewhere = another();
    const here = new FakeSink();
    const local = (await channels.open(request()))!;
    channels.connect(local, here);
    expect(await channels.delete(local.id)).toBe(true);
    expect(here.received.join('')).toContain(': channel deleted');
    expect(here.ended).toBe(true);

    const remote = (await channels.open(request()))!;
    const there = new FakeSink();
    elsewhere.connect((await elsewhere.get(remote.id))!, there);
    expect(await channels.delete(remote.id)).toBe(true);
    expect(there.ended).toBe(false);
    await elsewhere.heartbeat();
    expect(there.ended).toBe(true);
    expect(await channels.delete(remote.id)).toBe(false);
  });

  it('shutdown ends the connections and keeps the channels, with the state each receiver was told last', async () => {
    const { channels, another, append, request, states } = setup();
    const channel = (await channels.open(request()))!;
    channels.connect(channel, new FakeSink());
    await append(1);
    await channels.closeAll(() => 1_000);
    const restarted = another();
    expect(await restarted.get(channel.id)).toMatchObject({ id: channel.id, knownState: 'testepoch-1' });
    const sink = new FakeSink();
    restarted.connect((await restarted.get(channel.id))!, sink);
    await append(2);
    expect(states(sink)).toEqual(['testepoch-2']);
  });

  it('gives each channel an unguessable id', async () => {
    const { channels, request } = setup();
    const ids = new Set(await Promise.all(Array.from({ length: 10 }, async () => (await channels.open(request()))!.id)));
    expect(ids.size).toBe(10);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});

describe('notificationObject', () => {
  const subject = {
    topic: streamIri,
    kind: 'stream' as const,
    elementIri: `${streamIri}/elements/e1-7`,
    elementId: 'e1-7',
    generatedAt: new Date('2030-01-01T00:00:00Z'),
  };
  it('is an Activity Streams Add of the element to the stream', () => {
    expect(notificationObject(subject)).toEqual({
      '@context': ['https://www.w3.org/ns/activitystreams', 'https://www.w3.org/ns/solid/notification/v1'],
      id: `urn:rdf-stream:notification:add:${streamIri}/elements/e1-7`,
      type: 'Add',
      object: `${streamIri}/elements/e1-7`,
      target: streamIri,
      state: 'e1-7',
      published: '2030-01-01T00:00:00.000Z',
    });
  });
  it('is an Update of /latest for a /latest topic', () => {
    expect(notificationObject({ ...subject, kind: 'latest', topic: `${streamIri}/latest` })).toMatchObject({
      type: 'Update',
      object: `${streamIri}/latest`,
      target: `${streamIri}/elements/e1-7`,
    });
  });
});
