import { constants, gunzipSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { formatNames } from '@rdf-stream/protocol';
import { MemoryEventLog } from '../../../../src/log/memory-event-log.js';
import { Broadcaster } from '../../../../src/publish/sse/broadcaster.js';
import { patchFrame } from '../../../../src/publish/sse/element-patches.js';
import type { StreamMetrics } from '../../../../src/publish/stream-metrics.js';
import { noMetrics } from '../../../support/no-metrics.js';
import { Subscriber } from '../../../../src/publish/sse/subscriber.js';
import type { LoggedElement } from '../../../../src/render/render-element.js';
import { EventStreamEncoder, type SseEncoding } from '../../../../src/render/event-stream-encoder.js';
import { elementSseFrame, sseFrame } from '../../../../src/render/sse-frame.js';
import { FakeSink } from '../../../support/fake-sink.js';

function element(seq: number, size = 100): LoggedElement {
  const document = Buffer.from('x'.repeat(size));
  return {
    streamId: 's',
    epoch: 'e',
    seq,
    graph: `g${seq}`,
    generatedAt: new Date(0),
    documents: Object.fromEntries(formatNames.map((format) => [format, document])) as LoggedElement['documents'],
  };
}

const roomy = { maxQueueBytes: 1 << 20, stallTimeoutMs: 60_000 };

function setup(options: { batchSize?: number; metrics?: StreamMetrics } = {}) {
  const log = new MemoryEventLog(10, { retainedElements: 100, retainedSeconds: 0 });
  let turns = 0;
  const broadcaster = new Broadcaster(log, {
    streamId: 's',
    batchSize: options.batchSize ?? 1000,
    metrics: options.metrics ?? noMetrics,
    yieldTurn: async () => {
      turns++;
      await new Promise((resolve) => setImmediate(resolve));
    },
  });
  const metrics = options.metrics ?? noMetrics;
  const live = (sink: FakeSink, maxQueueBytes = 1 << 20, encoding: SseEncoding = 'identity') => {
    const subscriber = new Subscriber(sink, 'turtle', new EventStreamEncoder(encoding), log.latestSeq, { maxQueueBytes, stallTimeoutMs: 60_000 }, (_, reason) =>
      metrics.subscriberEvicted('s', reason),
    );
    subscriber.live = true;
    broadcaster.add(subscriber);
    return subscriber;
  };
  const publish = (size?: number) => {
    void log.append(element(log.nextSeq, size));
    return broadcaster.notify();
  };
  return { log, broadcaster, live, publish, turns: () => turns };
}

describe('Broadcaster', () => {
  it('writes each element, in order, once, to every live subscriber', async () => {
    const { live, publish } = setup();
    const sinks = [new FakeSink(), new FakeSink(), new FakeSink()];
    sinks.forEach((sink) => live(sink));
    await publish();
    await publish();
    for (const sink of sinks) expect(sink.ids()).toEqual([1, 2]);
  });

  it('writes the very same Buffer to every subscriber (no per-subscriber serialisation)', async () => {
    const { live, publish, log } = setup();
    const written: Buffer[] = [];
    const sinks = [new FakeSink(), new FakeSink()];
    for (const sink of sinks) {
      const write = sink.write.bind(sink);
      sink.write = (chunk) => {
        written.push(chunk as Buffer);
        return write(chunk);
      };
      live(sink);
    }
    await publish();
    expect(written).toHaveLength(2);
    expect(written[0]).toBe(elementSseFrame((await log.get(1))!, 'turtle'));
    expect(written[1]).toBe(written[0]);
  });

  it('compresses each element once for every gzip subscriber: the same Buffer for all, decoding to the frame', async () => {
    const { live, publish, log } = setup();
    const identity = new FakeSink();
    const gzipped = [new FakeSink(), new FakeSink()];
    live(identity);
    for (const sink of gzipped) live(sink, 1 << 20, 'gzip');
    await publish();
    await publish();
    const [first, second] = [(await log.get(1))!, (await log.get(2))!];
    expect(identity.written).toEqual([elementSseFrame(first, 'turtle'), elementSseFrame(second, 'turtle')]);
    expect(gzipped[1]!.written[0]).toBe(gzipped[0]!.written[0]);
    expect(gzipped[1]!.written[1]).toBe(gzipped[0]!.written[1]);
    for (const sink of gzipped) {
      expect(sink.written.map((fragment) => inflateRawSync(fragment, { finishFlush: constants.Z_SYNC_FLUSH }))).toEqual([
        elementSseFrame(first, 'turtle'),
        elementSseFrame(second, 'turtle'),
      ]);
    }
  });

  it('counts a gzip subscriber against its queue limit by the compressed bytes it holds', async () => {
    const { live, publish } = setup();
    const stalled = new FakeSink(false);
    live(stalled, 1 << 20, 'gzip');
    await publish(10_000);
    const fragment = stalled.written[0]!;
    expect(stalled.writableLength).toBe(fragment.length);
    expect(fragment.length).toBeLessThan(1_000);
  });

  it('heartbeats, elements and the farewell of a gzip subscriber make one valid gzip stream (CRC checked)', async () => {
    const { live, broadcaster, publish, log } = setup();
    const sink = new FakeSink();
    const subscriber = live(sink, 1 << 20, 'gzip');
    const start = subscriber.encoder.start(': ok\n\n');
    await broadcaster.heartbeat();
    await publish();
    await broadcaster.closeAll(() => 1234);
    expect(sink.ended).toBe(true);
    const body = gunzipSync(Buffer.concat([start, ...sink.written])).toString();
    expect(body).toBe(`: ok\n\n:\n\n${elementSseFrame((await log.get(1))!, 'turtle').toString()}: shutting down\nretry: 1234\n\n`);
  });

  it('yields to the event loop between batches of `batchSize` subscribers', async () => {
    const { live, publish, turns } = setup({ batchSize: 10 });
    for (let index = 0; index < 35; index++) live(new FakeSink());
    await publish();
    expect(turns()).toBe(3);
  });

  it('sends elements published during a broadcast right after it, in order', async () => {
    const { live, log, broadcaster } = setup({ batchSize: 1 });
    const sinks = [new FakeSink(), new FakeSink(), new FakeSink()];
    sinks.forEach((sink) => live(sink));
    void log.append(element(1));
    const first = broadcaster.notify();
    void log.append(element(2));
    void log.append(element(3));
    expect(broadcaster.notify()).toBe(first);
    await first;
    for (const sink of sinks) expect(sink.ids()).toEqual([1, 2, 3]);
    expect(broadcaster.broadcastSeq).toBe(3);
  });

  it('tells live subscribers of elements retention removed before they were broadcast, once, then goes on from the oldest retained', async () => {
    const log = new MemoryEventLog(1, { retainedElements: 2, retainedSeconds: 0 });
    const broadcaster = new Broadcaster(log, { streamId: 's', batchSize: 1000, metrics: noMetrics });
    const sink = new FakeSink();
    const subscriber = new Subscriber(sink, 'turtle', new EventStreamEncoder('identity'), 0, roomy);
    subscriber.live = true;
    broadcaster.add(subscriber);
    // Five elements before the broadcast reads: the log keeps only 4 and 5.
    for (let seq = 1; seq <= 5; seq++) void log.append(element(seq));
    await broadcaster.notify();
    const text = sink.received.join('');
    expect(text.match(/event: gap/g)).toHaveLength(1);
    expect(text).toContain('"requestedId":"' + log.epoch + '-0"');
    expect(text).toContain('"oldestRetained":"' + log.epoch + '-4"');
    expect(text).toContain('"reason":"expired"');
    expect(sink.ids()).toEqual([4, 5]);
    expect(broadcaster.broadcastSeq).toBe(5);
  });

  it('evicts a subscriber whose unsent bytes would exceed its limit, while others keep receiving', async () => {
    const evicted: string[] = [];
    const metrics = { ...noMetrics, subscriberEvicted: (_: string, reason: string) => void evicted.push(reason) };
    const { live, publish, broadcaster } = setup({ metrics });
    const reader = new FakeSink();
    const stalled = new FakeSink(false);
    live(reader);
    const frameBytes = sseFrame({ id: 'e-1', data: 'x'.repeat(1000) }).length;
    // Limit: exactly two frames may wait unsent.
    live(stalled, 2 * frameBytes);
    await publish(1000);
    await publish(1000);
    expect(stalled.writableLength).toBe(2 * frameBytes);
    expect(stalled.destroyed).toBe(false);
    await publish(1000);
    expect(stalled.destroyed).toBe(true);
    expect(evicted).toEqual(['queue']);
    expect(broadcaster.size).toBe(1);
    await publish(1000);
    expect(reader.ids()).toEqual([1, 2, 3, 4]);
  });

  it('skips subscribers still catching up and those already sent an element', async () => {
    const { broadcaster, log, publish } = setup();
    const replaying = new FakeSink();
    broadcaster.add(new Subscriber(replaying, 'turtle', new EventStreamEncoder('identity'), 0, roomy));
    const ahead = new FakeSink();
    const subscriber = new Subscriber(ahead, 'turtle', new EventStreamEncoder('identity'), 1, roomy);
    subscriber.live = true;
    broadcaster.add(subscriber);
    await publish();
    expect(log.latestSeq).toBe(1);
    expect(replaying.ids()).toEqual([]);
    expect(ahead.ids()).toEqual([]);
    await publish();
    expect(ahead.ids()).toEqual([2]);
  });

  it('builds each element\'s patch only while a /patches subscriber is connected, and writes it to that one alone', async () => {
    const { broadcaster, log, live, publish } = setup();
    const whole = new FakeSink();
    live(whole);
    const patchSink = new FakeSink();
    const patchSubscriber = new Subscriber(patchSink, 'patch', new EventStreamEncoder('identity'), log.latestSeq, roomy);
    expect(patchSubscriber.patches).toBe(true);
    patchSubscriber.live = true;
    broadcaster.add(patchSubscriber);
    await publish();
    // These elements are no N-Triples: the patch that follows nothing (see element-patches).
    expect(patchSink.received.join('')).toContain('data: H id <g1> .');
    expect(whole.received.join('')).not.toContain('H id');
    expect(whole.ids()).toEqual([1]);
    patchSink.destroy();
    await publish();
    expect(whole.ids()).toEqual([1, 2]);
    const second = (await log.get(2))!;
    expect(() => patchFrame(second, 'identity')).toThrow(/not prepared/);
  });

  it('forgets a subscriber when its connection closes', async () => {
    const { live, broadcaster } = setup();
    const sink = new FakeSink();
    live(sink);
    expect(broadcaster.size).toBe(1);
    sink.destroy();
    expect(broadcaster.size).toBe(0);
  });

  it('tells each size listener after every subscriber added or removed, until it stops listening', async () => {
    const { live, broadcaster } = setup();
    const seen: number[] = [];
    const stop = broadcaster.onSizeChanged(() => seen.push(broadcaster.size));
    const first = new FakeSink();
    const second = new FakeSink();
    live(first);
    live(second);
    first.destroy();
    expect(seen).toEqual([1, 2, 1]);
    stop();
    second.destroy();
    expect(seen).toEqual([1, 2, 1]);
    expect(broadcaster.size).toBe(0);
  });

  it('heartbeat writes one comment frame to every live subscriber', async () => {
    const { live, broadcaster } = setup();
    const sink = new FakeSink();
    live(sink);
    await broadcaster.heartbeat();
    expect(sink.received).toEqual([':\n\n']);
  });

  it('writes the heartbeat only to a subscriber sent no element since the last one, while acknowledgements are watched', async () => {
    const { live, broadcaster, publish, log } = setup();
    const busy = new FakeSink();
    live(busy);
    await publish();
    expect(busy.received).toHaveLength(1);
    await broadcaster.heartbeat();
    expect(busy.received).toHaveLength(1);
    await broadcaster.heartbeat();
    expect(busy.received.at(-1)).toBe(':\n\n');
    // Without the check of acknowledgements, every heartbeat is written.
    const unwatched = new FakeSink();
    const subscriber = new Subscriber(unwatched, 'turtle', new EventStreamEncoder('identity'), log.latestSeq, { ...roomy, progressCheckMs: 0 });
    subscriber.live = true;
    broadcaster.add(subscriber);
    await publish();
    await broadcaster.heartbeat();
    expect(unwatched.received.at(-1)).toBe(':\n\n');
  });

  it('closeAll ends every stream with its farewell, a retry delay drawn for each', async () => {
    const { live, broadcaster } = setup({ batchSize: 1 });
    const sinks = [new FakeSink(), new FakeSink()];
    sinks.forEach((sink) => live(sink));
    let delay = 1234;
    await broadcaster.closeAll(() => delay++);
    sinks.forEach((sink, index) => {
      expect(sink.ended).toBe(true);
      expect(sink.received).toEqual([`: shutting down\nretry: ${1234 + index}\n\n`]);
    });
  });
});
