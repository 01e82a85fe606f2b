import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryEventLog } from '../../../../src/log/memory-event-log.js';
import { Broadcaster } from '../../../../src/publish/sse/broadcaster.js';
import type { CutReason } from '../../../../src/publish/sse/push-subscriber.js';
import { noMetrics } from '../../../support/no-metrics.js';
import { type WebSocketSink, WebSocketSubscriber } from '../../../../src/publish/sse/websocket-subscriber.js';
import { PING_FRAME } from '../../../../src/render/websocket-frame.js';
import { FakeSink } from '../../../support/fake-sink.js';
import { loggedElement } from '../../../support/logged-element.js';

/** A WebSocket's connection in memory: what was written, the close frames asked for, pongs on demand. */
class FakeWebSocketSink extends FakeSink implements WebSocketSink {
  readonly closes: Array<[number, string]> = [];
  #pong: Array<() => void> = [];

  constructor(
    readonly compressed = false,
    reading = true,
  ) {
    super(reading);
  }

  closeWith(code: number, reason: string): void {
    this.closes.push([code, reason]);
    this.destroyed = true;
  }

  cut(reason: CutReason): void {
    this.closeWith(4008, JSON.stringify({ code: 'evicted', reason }));
  }

  onPong(listener: () => void): void {
    this.#pong.push(listener);
  }

  pong(): void {
    for (const listener of this.#pong) listener();
  }
}

const limits = { maxQueueBytes: 1 << 20, stallTimeoutMs: 60_000, pongTimeoutMs: 1_000 };

function setup() {
  const log = new MemoryEventLog(10, { retainedElements: 100, retainedSeconds: 0 });
  const broadcaster = new Broadcaster(log, { streamId: 's', batchSize: 100, metrics: noMetrics });
  const cuts: CutReason[] = [];
  const live = (sink: FakeWebSocketSink, format: 'turtle' | 'jsonld' = 'turtle', maxQueueBytes = limits.maxQueueBytes) => {
    const subscriber = new WebSocketSubscriber(sink, format, log.latestSeq, { ...limits, maxQueueBytes }, (_, reason) => cuts.push(reason));
    subscriber.live = true;
    broadcaster.add(subscriber);
    return subscriber;
  };
  const publish = () => {
    void log.append(loggedElement(log.nextSeq, undefined, log.epoch));
    return broadcaster.notify();
  };
  return { log, broadcaster, live, publish, cuts };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('WebSocketSubscriber', () => {
  it('writes the very same frame Buffer to every socket of a format and compression', async () => {
    const { live, publish } = setup();
    const plain = [new FakeWebSocketSink(), new FakeWebSocketSink()];
    const compressed = [new FakeWebSocketSink(true), new FakeWebSocketSink(true)];
    const other = new FakeWebSocketSink(false);
    [...plain, ...compressed].forEach((sink) => live(sink));
    live(other, 'jsonld');
    await publish();
    expect(plain[0]!.written[0]).toBe(plain[1]!.written[0]);
    expect(compressed[0]!.written[0]).toBe(compressed[1]!.written[0]);
    expect(compressed[0]!.written[0]![0]).toBe(0xc1);
    expect(plain[0]!.written[0]![0]).toBe(0x81);
    expect(other.written[0]).not.toBe(plain[0]!.written[0]);
  });

  it('is evicted with close 4008 when a frame would pass its queue limit, and reports why', async () => {
    const { live, publish, cuts } = setup();
    const stalled = new FakeWebSocketSink(false, false);
    const subscriber = live(stalled, 'turtle', 50);
    await publish();
    expect(stalled.writableLength).toBeGreaterThan(25);
    await publish();
    expect(stalled.closes).toEqual([[4008, '{"code":"evicted","reason":"queue"}']]);
    expect(cuts).toEqual(['queue']);
    expect(subscriber.closed).toBe(true);
    expect(subscriber.lastSentSeq).toBe(1);
  });

  it('pings at each heartbeat, and cuts a client whose pong does not come within pongTimeoutMs', async () => {
    vi.useFakeTimers();
    const { live, broadcaster, cuts } = setup();
    const answering = new FakeWebSocketSink();
    const silent = new FakeWebSocketSink();
    live(answering);
    live(silent);
    await broadcaster.heartbeat();
    expect(answering.written).toEqual([PING_FRAME]);
    answering.pong();
    vi.advanceTimersByTime(limits.pongTimeoutMs);
    expect(silent.destroyed).toBe(true);
    expect(answering.destroyed).toBe(false);
    expect(cuts).toEqual(['pong']);
  });

  it('pings only a socket sent no element since the last heartbeat, while acknowledgements are watched', async () => {
    const { live, broadcaster, publish, log } = setup();
    const busy = new FakeWebSocketSink();
    live(busy);
    await publish();
    const elementBytes = busy.written.length;
    await broadcaster.heartbeat();
    expect(busy.written).toHaveLength(elementBytes);
    await broadcaster.heartbeat();
    expect(busy.written.at(-1)).toEqual(PING_FRAME);
    // Without the check of acknowledgements, the ping is the only sign of a vanished peer.
    const unwatched = new FakeWebSocketSink();
    const subscriber = new WebSocketSubscriber(unwatched, 'turtle', log.latestSeq, { ...limits, progressCheckMs: 0 });
    subscriber.live = true;
    broadcaster.add(subscriber);
    await publish();
    await broadcaster.heartbeat();
    expect(unwatched.written.at(-1)).toEqual(PING_FRAME);
  });

  it('at shutdown, closes 1012 with the delay to come back after', async () => {
    const { live, broadcaster } = setup();
    const sinks = [new FakeWebSocketSink(), new FakeWebSocketSink(true)];
    sinks.forEach((sink) => live(sink));
    let delay = 2000;
    await broadcaster.closeAll(() => delay++);
    expect(sinks.map((sink) => sink.closes)).toEqual([[[1012, '{"retryMs":2000}']], [[1012, '{"retryMs":2001}']]]);
  });
});
