import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Clock } from '../../../../src/clock-and-logger.js';
import { type EvictionReason, GuardedSink } from '../../../../src/publish/sse/guarded-sink.js';
import { connectionKey, type KernelSendQueues } from '../../../../src/publish/sse/kernel-send-queues.js';
import { SendProgressMonitor } from '../../../../src/publish/sse/send-progress-monitor.js';
import { FakeSink } from '../../../support/fake-sink.js';
import { manualClock } from '../../../../src/testing/manual-clock.js';

const limits = { maxQueueBytes: 1 << 20, stallTimeoutMs: 10_000 };

function subscriberOn(sink: FakeSink) {
  const evictions: EvictionReason[] = [];
  const subscriber = new GuardedSink(sink, limits, (reason) => evictions.push(reason));
  return { subscriber, evictions };
}

describe('GuardedSink', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('evicts a reader whose socket refuses data for stallTimeoutMs without draining', () => {
    // The kernel's socket buffers absorb a stalled reader's first megabyte: the first refused
    // write is the first sign, and from then on the reader has stallTimeoutMs to drain.
    const sink = new FakeSink(false, 10);
    const { subscriber, evictions } = subscriberOn(sink);
    expect(subscriber.write(Buffer.from('x'.repeat(20)))).toBe(false);
    vi.advanceTimersByTime(limits.stallTimeoutMs - 1);
    expect(sink.destroyed).toBe(false);
    vi.advanceTimersByTime(1);
    expect(sink.destroyed).toBe(true);
    expect(subscriber.closed).toBe(true);
    expect(evictions).toEqual(['stall']);
  });

  it('keeps a slow reader that drains within stallTimeoutMs, and watches it again at its next refusal', () => {
    const sink = new FakeSink(false, 10);
    const { subscriber, evictions } = subscriberOn(sink);
    subscriber.write(Buffer.from('x'.repeat(20)));
    vi.advanceTimersByTime(limits.stallTimeoutMs - 1);
    sink.drain();
    vi.advanceTimersByTime(limits.stallTimeoutMs * 2);
    expect(sink.destroyed).toBe(false);
    expect(evictions).toEqual([]);

    sink.reading = false;
    subscriber.write(Buffer.from('y'.repeat(20)));
    vi.advanceTimersByTime(limits.stallTimeoutMs);
    expect(evictions).toEqual(['stall']);
  });

  it('never evicts a reader whose writes are all accepted', () => {
    const sink = new FakeSink();
    const { subscriber, evictions } = subscriberOn(sink);
    for (let seq = 1; seq <= 100; seq++) subscriber.write(Buffer.from('x'));
    vi.advanceTimersByTime(limits.stallTimeoutMs * 10);
    expect(evictions).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('drained() resolves false when the stall timer evicts the subscriber (catch-up never waits for ever)', async () => {
    const sink = new FakeSink(false, 10);
    const { subscriber, evictions } = subscriberOn(sink);
    subscriber.write(Buffer.from('x'.repeat(20)));
    const drained = subscriber.drained();
    vi.advanceTimersByTime(limits.stallTimeoutMs);
    await expect(drained).resolves.toBe(false);
    expect(evictions).toEqual(['stall']);
  });

  it('a closed subscriber leaves no stall timer behind and is not reported as evicted', () => {
    const sink = new FakeSink(false, 10);
    const { subscriber, evictions } = subscriberOn(sink);
    subscriber.write(Buffer.from('x'.repeat(20)));
    subscriber.close();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(limits.stallTimeoutMs);
    expect(evictions).toEqual([]);
  });

  it('says whether a write would pass maxQueueBytes, and is reported once when cut for it', () => {
    const sink = new FakeSink(false, 1 << 30);
    const { subscriber, evictions } = subscriberOn(sink);
    subscriber.write(Buffer.alloc(limits.maxQueueBytes - 10));
    expect(subscriber.wouldOverflow(10)).toBe(false);
    expect(subscriber.wouldOverflow(11)).toBe(true);
    subscriber.evict('queue');
    subscriber.evict('queue');
    expect(sink.destroyed).toBe(true);
    expect(evictions).toEqual(['queue']);
  });
});

describe('GuardedSink with its own timers (the notification channels pass their clock)', () => {
  it('watches a stall with the timers it is given', () => {
    const pending = new Map<number, () => void>();
    let next = 0;
    const timers: Pick<Clock, 'setTimeout' | 'clearTimeout'> = {
      setTimeout: (callback) => (pending.set(++next, callback), next),
      clearTimeout: (handle) => pending.delete(handle as number),
    };
    const sink = new FakeSink(false, 10);
    const evictions: EvictionReason[] = [];
    const connection = new GuardedSink(sink, limits, (reason) => evictions.push(reason), timers);
    connection.write('x'.repeat(20));
    expect(pending.size).toBe(1);
    sink.drain();
    expect(pending.size).toBe(0);
    sink.reading = false;
    connection.write('y'.repeat(20));
    for (const fire of pending.values()) fire();
    expect(evictions).toEqual(['stall']);
    expect(sink.destroyed).toBe(true);
  });
});

describe('GuardedSink over a TCP connection (what its client acknowledged, kernel queue counted)', () => {
  /** A sink whose connection the kernel holds `kernelQueued` bytes of. */
  class ConnectionSink extends FakeSink {
    readonly socket = {
      localAddress: '127.0.0.1',
      localPort: 8080,
      remoteAddress: '127.0.0.1',
      remotePort: 50_000,
      bytesWritten: 0,
      writableLength: 0,
      kernelQueued: 0,
      resets: 0,
      resetAndDestroy: () => {
        this.socket.resets++;
        this.destroy();
      },
    };
    readonly #ownWrites: (() => void)[] = [];

    onOwnWrite(listener: () => void): void {
      this.#ownWrites.push(listener);
    }

    /** A write of the sink's own (a WebSocket's pong), which its client does not read. */
    ownWriteUnread(bytes: number): void {
      this.socket.bytesWritten += bytes;
      this.socket.kernelQueued += bytes;
      for (const listener of this.#ownWrites) listener();
    }
  }

  function setup() {
    const time = manualClock(0);
    const sink = new ConnectionSink(true);
    const queues: KernelSendQueues = {
      snapshot: async (found) => {
        found(connectionKey(sink.socket) as string, sink.socket.kernelQueued);
        return true;
      },
    };
    const monitor = new SendProgressMonitor(1_000, queues, time.clock, async () => undefined);
    const evictions: EvictionReason[] = [];
    const connection = new GuardedSink(sink, { ...limits, maxQueueBytes: 512 * 1024 }, (reason) => evictions.push(reason), time.clock, monitor);
    /** The client's kernel took `bytes`; its reader reads none of it: they stay unacknowledged. */
    const sendUnread = (bytes: number) => {
      connection.write(Buffer.alloc(bytes));
      sink.socket.bytesWritten += bytes;
      sink.socket.kernelQueued += bytes;
    };
    const runUntil = async (ms: number) => {
      while (time.now() + 1_000 <= ms) {
        time.advanceBy(1_000);
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    return { sink, connection, monitor, evictions, sendUnread, runUntil };
  }

  it('cuts, by a reset, a client that acknowledged nothing for stallTimeoutMs though every write was accepted', async () => {
    const { sink, connection, monitor, evictions, sendUnread, runUntil } = setup();
    for (let second = 1; second <= 11; second++) {
      sendUnread(5_500);
      await runUntil(second * 1_000);
    }
    expect(evictions).toEqual(['stall']);
    expect(sink.socket.resets).toBe(1);
    expect(connection.closed).toBe(true);
    expect(monitor.size).toBe(0);
  });

  it('cuts a client whose unacknowledged bytes in the kernel pass maxQueueBytes, at the next check', async () => {
    const { sink, evictions, sendUnread, runUntil } = setup();
    sendUnread(512 * 1024);
    await runUntil(1_000);
    expect(evictions).toEqual([]);
    sendUnread(1);
    await runUntil(2_000);
    expect(evictions).toEqual(['queue']);
    expect(sink.socket.resets).toBe(1);
  });

  it('stops watching a connection its client closed', async () => {
    const { sink, monitor, evictions, sendUnread, runUntil } = setup();
    sendUnread(5_500);
    expect(monitor.size).toBe(1);
    sink.destroy();
    expect(monitor.size).toBe(0);
    await runUntil(30_000);
    expect(evictions).toEqual([]);
  });

  it.each([
    ['written through the guard', (sink: ConnectionSink, sendUnread: (bytes: number) => void) => sendUnread(5_500)],
    ['written by the sink on its own (a pong)', (sink: ConnectionSink) => sink.ownWriteUnread(125)],
  ])('leaves a connection idle at a check out of the checks until something is %s, then finds it stalled', async (_, write) => {
    const { sink, monitor, evictions, sendUnread, runUntil } = setup();
    await runUntil(1_000); // nothing outstanding: idle
    expect(monitor.unsettled).toBe(0);
    await runUntil(20_000);
    write(sink, sendUnread);
    expect(monitor.unsettled).toBe(1);
    await runUntil(29_000);
    expect(evictions).toEqual([]);
    await runUntil(30_000);
    expect(evictions).toEqual(['stall']);
  });
});
