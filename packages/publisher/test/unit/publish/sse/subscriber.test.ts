import { describe, expect, it } from 'vitest';
import { type EvictionReason, Subscriber } from '../../../../src/publish/sse/subscriber.js';
import { EventStreamEncoder } from '../../../../src/render/event-stream-encoder.js';
import { FakeSink } from '../../../support/fake-sink.js';

const limits = { maxQueueBytes: 1 << 20, stallTimeoutMs: 10_000 };

describe('Subscriber', () => {
  it('remembers the last element sent, so that catch-up and broadcast never send one twice', () => {
    const sink = new FakeSink();
    const subscriber = new Subscriber(sink, 'turtle', new EventStreamEncoder('identity'), 4, limits);
    expect(subscriber.lastSentSeq).toBe(4);
    subscriber.send(Buffer.from('id: 5\ndata: x\n\n'), 5);
    subscriber.write(': heartbeat\n\n');
    expect(subscriber.lastSentSeq).toBe(5);
    expect(sink.ids()).toEqual([5]);
  });

  it('reports itself, with the reason, when it is cut; not when it is closed', () => {
    const evicted: Array<[Subscriber, EvictionReason]> = [];
    const cut = new Subscriber(new FakeSink(), 'turtle', new EventStreamEncoder('identity'), 0, limits, (subscriber, reason) => evicted.push([subscriber, reason]));
    const closed = new Subscriber(new FakeSink(), 'turtle', new EventStreamEncoder('identity'), 0, limits, (subscriber, reason) => evicted.push([subscriber, reason]));
    cut.evict('queue');
    closed.close(': bye\n\n');
    expect(evicted).toEqual([[cut, 'queue']]);
    expect(cut.closed && closed.closed).toBe(true);
  });
});
