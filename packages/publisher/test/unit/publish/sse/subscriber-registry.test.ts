import { describe, expect, it, vi } from 'vitest';
import { MemoryEventLog } from '../../../../src/log/memory-event-log.js';
import type { CutReason } from '../../../../src/publish/sse/push-subscriber.js';
import type { StreamMetrics } from '../../../../src/publish/stream-metrics.js';
import { type SubscriberLimits, SubscriberRegistry, TooManySubscribersError } from '../../../../src/publish/sse/subscriber-registry.js';
import type { WebSocketSink } from '../../../../src/publish/sse/websocket-subscriber.js';
import { EventStreamEncoder } from '../../../../src/render/event-stream-encoder.js';
import { FakeSink } from '../../../support/fake-sink.js';
import { loggedElement } from '../../../support/logged-element.js';
import { noMetrics } from '../../../support/no-metrics.js';
import { patience } from '../../../support/patience.js';

const limits: SubscriberLimits = {
  broadcastBatchSize: 100,
  maxSubscribers: 3,
  maxSubscriberQueueBytes: 1 << 20,
  subscriberStallTimeoutMs: 60_000,
  subscriberProgressCheckMs: 0,
  catchUpBatchElements: 2,
  wsPongTimeoutMs: 60_000,
};

function setup(options: { limits?: Partial<SubscriberLimits>; subscribersInProcess?: () => number; retainedElements?: number } = {}) {
  const log = new MemoryEventLog(2, { retainedElements: options.retainedElements ?? 100, retainedSeconds: 0 }, { epoch: 'e1' });
  const evicted: CutReason[] = [];
  const errors: unknown[] = [];
  const metrics: StreamMetrics = { ...noMetrics, subscriberEvicted: (_, reason) => void evicted.push(reason) };
  const registry = new SubscriberRegistry({
    streamId: 'parking',
    log,
    metrics,
    limits: { ...limits, ...options.limits },
    onError: (error) => errors.push(error),
    ...(options.subscribersInProcess ? { subscribersInProcess: options.subscribersInProcess } : {}),
  });
  const append = async (count: number) => {
    for (let i = 0; i < count; i++) await log.append(loggedElement(log.nextSeq, undefined, log.epoch));
  };
  const publish = async (count = 1) => {
    await append(count);
    await registry.broadcaster.notify();
  };
  return { log, registry, evicted, errors, append, publish };
}

/** The sequence numbers of the element frames a sink received, in order. */
const seqs = (sink: FakeSink) => sink.received.flatMap((text) => [...text.matchAll(/^id: e1-(\d+)$/gm)].map((match) => Number(match[1])));

const sse = () => new EventStreamEncoder('identity');

describe('SubscriberRegistry', () => {
  it('replays from the plan, in batches, then hands over to live delivery with no gap and no duplicate', async () => {
    const { registry, append, publish } = setup();
    await append(5);
    const sink = new FakeSink();
    const subscriber = registry.subscribe(sink, 'turtle', sse(), { kind: 'replay', fromSeq: 2 });
    // Published while catching up: delivered once, by whichever path reaches it first.
    await publish();
    await vi.waitFor(() => expect(subscriber.live).toBe(true), patience);
    await publish(2);
    expect(seqs(sink)).toEqual([2, 3, 4, 5, 6, 7, 8]);
  });

  it('sends only what comes after a live subscription starts', async () => {
    const { registry, append, publish } = setup();
    await append(3);
    const sink = new FakeSink();
    const subscriber = registry.subscribe(sink, 'turtle', sse(), { kind: 'live' });
    await vi.waitFor(() => expect(subscriber.live).toBe(true), patience);
    expect(seqs(sink)).toEqual([]);
    await publish();
    expect(seqs(sink)).toEqual([4]);
  });

  it('says `expired` and goes on from the oldest retained element when retention removed the requested ones', async () => {
    const { log, registry, append } = setup({ retainedElements: 2 });
    await append(7);
    expect(log.oldestSeq).toBeGreaterThan(2);
    const sink = new FakeSink();
    const subscriber = registry.subscribe(sink, 'turtle', sse(), { kind: 'replay', fromSeq: 1 });
    await vi.waitFor(() => expect(subscriber.live).toBe(true), patience);
    const text = sink.received.join('');
    expect(text.indexOf('event: gap')).toBeGreaterThanOrEqual(0);
    expect(text.indexOf('event: gap')).toBeLessThan(text.indexOf('id: e1-'));
    expect(text.match(/event: gap/g)).toHaveLength(1);
    expect(text).toContain('"reason":"expired"');
    expect(seqs(sink)).toEqual(Array.from({ length: 7 - log.oldestSeq! + 1 }, (_, index) => log.oldestSeq! + index));
  });

  it('refuses a subscriber past maxSubscribers before writing anything to it', () => {
    const { registry } = setup({ limits: { maxSubscribers: 2 } });
    registry.subscribe(new FakeSink(), 'turtle', sse(), { kind: 'live' });
    expect(registry.full).toBe(false);
    registry.subscribe(new FakeSink(), 'turtle', sse(), { kind: 'live' });
    expect(registry.full).toBe(true);
    const refused = new FakeSink();
    expect(() => registry.subscribe(refused, 'turtle', sse(), { kind: 'live' })).toThrow(TooManySubscribersError);
    expect(refused.written).toEqual([]);
    expect(registry.broadcaster.size).toBe(2);
  });

  it("counts the process's subscribers when told to, all streams together", () => {
    let elsewhere = 0;
    const { registry } = setup({ limits: { maxSubscribers: 2 }, subscribersInProcess: () => elsewhere });
    expect(registry.full).toBe(false);
    elsewhere = 2;
    expect(registry.full).toBe(true);
    expect(() => registry.subscribe(new FakeSink(), 'turtle', sse(), { kind: 'live' })).toThrow(TooManySubscribersError);
  });

  it('stops feeding an evicted subscriber and counts its eviction', async () => {
    const { registry, publish, evicted } = setup({ limits: { maxSubscriberQueueBytes: 64 } });
    const slow = new FakeSink(false, 1 << 20);
    const subscriber = registry.subscribe(slow, 'turtle', sse(), { kind: 'live' });
    await vi.waitFor(() => expect(subscriber.live).toBe(true), patience);
    expect(registry.broadcaster.size).toBe(1);
    await publish(3);
    expect(registry.broadcaster.size).toBe(0);
    expect(slow.destroyed).toBe(true);
    expect(evicted).toHaveLength(1);
  });

  it("sends a data WebSocket the plan's gap first, then the replay", async () => {
    const { registry, append } = setup();
    await append(3);
    const sink = Object.assign(new FakeSink(), { closeWith: () => {}, cut: () => {}, onPong: () => {}, compressed: false }) as FakeSink & WebSocketSink;
    const subscriber = registry.subscribeWebSocket(sink, 'turtle', { kind: 'gap', requestedId: 'old-9', fromSeq: 2, reason: 'epoch' });
    await vi.waitFor(() => expect(subscriber.live).toBe(true), patience);
    const texts = sink.received;
    expect(texts[0]).toContain('"requestedId":"old-9"');
    expect(texts[0]).toContain('"reason":"epoch"');
    expect(texts.slice(1).map((text) => text.match(/element e1-(\d+)/)?.[1])).toEqual(['2', '3']);
  });
});
