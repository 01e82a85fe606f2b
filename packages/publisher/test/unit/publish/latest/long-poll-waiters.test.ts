import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EvictionReason } from '../../../../src/publish/sse/guarded-sink.js';
import { connectionKey, type KernelSendQueues } from '../../../../src/publish/sse/kernel-send-queues.js';
import { LongPollWaiters, STALE_ENTRIES_KEPT, TooManyWaitersError, type WaitOutcome } from '../../../../src/publish/latest/long-poll-waiters.js';
import { SendProgressMonitor } from '../../../../src/publish/sse/send-progress-monitor.js';
import { manualClock } from '../../../../src/testing/manual-clock.js';
import { patience } from '../../../support/patience.js';

/** What a wait has come to so far: its outcome, or `pending` (checked after the microtasks already queued). */
const state = (wait: Promise<WaitOutcome>) => Promise.race([wait, Promise.resolve('pending' as const)]);

describe('LongPollWaiters', () => {
  let counts: number[];
  let waiters: LongPollWaiters;

  beforeEach(() => {
    vi.useFakeTimers();
    counts = [];
    waiters = new LongPollWaiters(2, (count) => counts.push(count));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('holds requests until release(), then answers each of them with the element', async () => {
    const first = waiters.wait(30_000, new AbortController().signal);
    const second = waiters.wait(30_000, new AbortController().signal);
    expect(waiters.size).toBe(2);
    expect(await state(first)).toBe('pending');
    waiters.release();
    expect(await Promise.all([first, second])).toEqual(['element', 'element']);
    expect(waiters.size).toBe(0);
    // One change for the whole release, not one per request.
    expect(counts).toEqual([1, 2, 0]);
  });

  it('tells each size listener what it tells onChange, until it stops listening', async () => {
    const seen: number[] = [];
    const stop = waiters.onSizeChanged(() => seen.push(waiters.size));
    const timedOut = waiters.wait(1_000, new AbortController().signal);
    const released = waiters.wait(30_000, new AbortController().signal);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await timedOut).toBe('timeout');
    waiters.release();
    expect(await released).toBe('element');
    expect(seen).toEqual([1, 2, 1, 0]);
    expect(counts).toEqual(seen);
    stop();
    void waiters.wait(30_000, new AbortController().signal);
    expect(seen).toEqual([1, 2, 1, 0]);
    expect(waiters.size).toBe(1);
    waiters.release();
  });

  it('answers with the outcome release() is given', async () => {
    const wait = waiters.wait(30_000, new AbortController().signal);
    waiters.release('aborted');
    expect(await wait).toBe('aborted');
  });

  it('holds maxWaiters requests at once, exactly: the next is refused until one is answered', async () => {
    const first = waiters.wait(30_000, new AbortController().signal);
    const second = waiters.wait(60_000, new AbortController().signal);
    const refused = waiters.wait(30_000, new AbortController().signal);
    await expect(refused).rejects.toBeInstanceOf(TooManyWaitersError);
    await expect(refused).rejects.toThrow('2 long-poll requests are already waiting');
    await expect(refused).rejects.toMatchObject({ name: 'TooManyWaitersError' });
    expect(waiters.size).toBe(2);
    expect(counts).toEqual([1, 2]);

    const controller = new AbortController();
    controller.abort();
    // At the limit, even a request already gone is refused rather than counted.
    await expect(waiters.wait(30_000, controller.signal)).rejects.toBeInstanceOf(TooManyWaitersError);

    vi.advanceTimersByTime(30_000);
    expect(await state(first)).toBe('timeout');
    const next = waiters.wait(1_000, new AbortController().signal);
    expect(waiters.size).toBe(2);
    waiters.release();
    expect(await Promise.all([second, next])).toEqual(['element', 'element']);
  });

  it('with maxWaiters 0, holds no request at all', async () => {
    const none = new LongPollWaiters(0);
    await expect(none.wait(1_000, new AbortController().signal)).rejects.toBeInstanceOf(TooManyWaitersError);
    expect(none.size).toBe(0);
  });

  it('answers timeout after timeoutMs exactly, not a millisecond before', async () => {
    const wait = waiters.wait(5_000, new AbortController().signal);
    vi.advanceTimersByTime(4_999);
    expect(await state(wait)).toBe('pending');
    expect(waiters.size).toBe(1);
    vi.advanceTimersByTime(1);
    expect(await state(wait)).toBe('timeout');
    expect(waiters.size).toBe(0);
    expect(counts).toEqual([1, 0]);
  });

  it('answers aborted when the client goes away, and forgets the request', async () => {
    const controller = new AbortController();
    const wait = waiters.wait(30_000, controller.signal);
    const other = waiters.wait(30_000, new AbortController().signal);
    controller.abort();
    expect(await wait).toBe('aborted');
    expect(waiters.size).toBe(1);
    waiters.release();
    expect(await other).toBe('element');
    expect(counts).toEqual([1, 2, 1, 0]);
  });

  it('answers a request whose client is already gone at once, without holding it', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await waiters.wait(30_000, controller.signal)).toBe('aborted');
    expect(waiters.size).toBe(0);
    expect(counts).toEqual([]);
  });

  it('answers each request once: no timer left behind, a later abort or release changes nothing', async () => {
    const controller = new AbortController();
    const wait = waiters.wait(30_000, controller.signal);
    waiters.release();
    expect(await wait).toBe('element');
    expect(vi.getTimerCount()).toBe(0);
    controller.abort();
    waiters.release('timeout');
    vi.advanceTimersByTime(60_000);
    expect(await wait).toBe('element');
    expect(counts).toEqual([1, 0]);
  });

  it('release() with nobody waiting does nothing', () => {
    waiters.release();
    expect(waiters.size).toBe(0);
    expect(counts).toEqual([]);
  });
});

describe('LongPollWaiters holding waiters of their own (held connections)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A waiter that records how its wait ended. */
  const recorder = (outcomes: string[], name: string) => ({ settle: (outcome: WaitOutcome) => void outcomes.push(`${name} ${outcome}`) });

  it('tells a held waiter its outcome once; a cancelled one is told nothing and leaves no timer', () => {
    const outcomes: string[] = [];
    const waiters = new LongPollWaiters(3);
    expect(waiters.hold(recorder(outcomes, 'a'), 1_000)).toBe(true);
    const cancelled = recorder(outcomes, 'b');
    expect(waiters.hold(cancelled, 1_000)).toBe(true);
    expect(waiters.cancel(cancelled)).toBe(true);
    expect(waiters.cancel(cancelled)).toBe(false);
    expect(waiters.size).toBe(1);
    vi.advanceTimersByTime(1_000);
    expect(outcomes).toEqual(['a timeout']);
    expect(waiters.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ends waits of different durations, held in any order, each at its own deadline, with one timer per duration', () => {
    const outcomes: string[] = [];
    const waiters = new LongPollWaiters(10);
    const at = (ms: number) => vi.advanceTimersByTime(ms - Date.now());
    vi.setSystemTime(0);
    waiters.hold(recorder(outcomes, 'a'), 3_000); // due at 3 000
    at(500);
    waiters.hold(recorder(outcomes, 'b'), 1_000); // due at 1 500
    waiters.hold(recorder(outcomes, 'c'), 3_000); // due at 3 500
    at(1_000);
    waiters.hold(recorder(outcomes, 'd'), 1_000); // due at 2 000
    expect(vi.getTimerCount()).toBe(2);
    const timedOut = (ms: number) => {
      at(ms);
      return outcomes.map((outcome) => outcome.replace(' timeout', ''));
    };
    expect(timedOut(1_499)).toEqual([]);
    expect(timedOut(1_500)).toEqual(['b']);
    expect(timedOut(1_999)).toEqual(['b']);
    expect(timedOut(2_000)).toEqual(['b', 'd']);
    expect(timedOut(2_999)).toEqual(['b', 'd']);
    expect(timedOut(3_000)).toEqual(['b', 'd', 'a']);
    expect(timedOut(3_499)).toEqual(['b', 'd', 'a']);
    expect(timedOut(3_500)).toEqual(['b', 'd', 'a', 'c']);
    expect([waiters.size, waiters.queuedEntries, vi.getTimerCount()]).toEqual([0, 0, 0]);
  });

  it('times out a request held again by its new deadline, not by the entry of its earlier hold', () => {
    const outcomes: string[] = [];
    const waiters = new LongPollWaiters(10);
    const again = recorder(outcomes, 'again');
    waiters.hold(recorder(outcomes, 'other'), 1_200);
    waiters.hold(again, 1_000); // due at 1 000
    vi.advanceTimersByTime(400);
    waiters.cancel(again);
    waiters.hold(again, 1_000); // due at 1 400; its entry due at 1 000 is still queued
    expect(waiters.queuedEntries).toBe(3);
    vi.advanceTimersByTime(600); // 1 000
    expect(outcomes).toEqual([]);
    vi.advanceTimersByTime(200); // 1 200
    expect(outcomes).toEqual(['other timeout']);
    vi.advanceTimersByTime(199);
    expect(outcomes).toEqual(['other timeout']);
    vi.advanceTimersByTime(1); // 1 400
    expect(outcomes).toEqual(['other timeout', 'again timeout']);
    expect([waiters.size, waiters.queuedEntries, vi.getTimerCount()]).toEqual([0, 0, 0]);
  });

  it(`keeps at most STALE_ENTRIES_KEPT (${STALE_ENTRIES_KEPT}) entries of cancelled requests in a queue beyond those held, and none once nothing is held`, () => {
    const outcomes: string[] = [];
    const waiters = new LongPollWaiters(10);
    waiters.hold(recorder(outcomes, 'kept'), 60_000);
    for (let index = 0; index < STALE_ENTRIES_KEPT; index++) {
      const cancelled = recorder(outcomes, `cancelled ${index}`);
      waiters.hold(cancelled, 60_000);
      waiters.cancel(cancelled);
    }
    // At the limit: the held one and every cancelled one.
    expect([waiters.size, waiters.queuedEntries]).toEqual([1, 1 + STALE_ENTRIES_KEPT]);
    const past = recorder(outcomes, 'past');
    waiters.hold(past, 60_000);
    waiters.cancel(past);
    expect([waiters.size, waiters.queuedEntries]).toEqual([1, 1 + STALE_ENTRIES_KEPT + 1]);
    const next = recorder(outcomes, 'next');
    waiters.hold(next, 60_000);
    // Past it: the next hold drops the cancelled ones and keeps the two held, in order.
    expect([waiters.size, waiters.queuedEntries]).toEqual([2, 2]);
    waiters.cancel(next);
    vi.advanceTimersByTime(60_000);
    expect(outcomes).toEqual(['kept timeout']);
    expect([waiters.size, waiters.queuedEntries, vi.getTimerCount()]).toEqual([0, 0, 0]);
    const last = recorder(outcomes, 'last');
    waiters.hold(last, 60_000);
    waiters.cancel(last);
    expect([waiters.size, waiters.queuedEntries, vi.getTimerCount()]).toEqual([0, 0, 0]);
  });

  it('holds maxWaiters at once: hold() returns false at the limit, holding nothing', () => {
    const outcomes: string[] = [];
    const waiters = new LongPollWaiters(1);
    expect(waiters.hold(recorder(outcomes, 'a'), 1_000)).toBe(true);
    expect(waiters.hold(recorder(outcomes, 'b'), 1_000)).toBe(false);
    expect(waiters.size).toBe(1);
    void waiters.release();
    expect(outcomes).toEqual(['a element']);
  });

  it('answers batchSize waiters per event-loop turn; one held during a release waits for the next', async () => {
    const outcomes: string[] = [];
    const turns: Array<() => void> = [];
    const counts: number[] = [];
    const waiters = new LongPollWaiters(10, (count) => counts.push(count), undefined, {
      batchSize: 2,
      yieldTurn: () => new Promise<void>((resolve) => turns.push(resolve)),
    });
    for (const name of ['a', 'b', 'c', 'd', 'e']) waiters.hold(recorder(outcomes, name), 30_000);
    let releases = 0;
    waiters.onReleased(() => releases++);
    const released = waiters.release();
    // The first batch at once, the count down to 0 at once.
    expect(outcomes).toEqual(['a element', 'b element']);
    expect(waiters.size).toBe(0);
    waiters.hold(recorder(outcomes, 'late'), 30_000);
    turns.shift()!();
    await vi.waitFor(() => expect(turns).toHaveLength(1), patience);
    expect(outcomes).toEqual(['a element', 'b element', 'c element', 'd element']);
    // A waiter whose time runs out before its batch comes is answered by the release only, once.
    vi.advanceTimersByTime(30_000);
    expect(outcomes.at(-1)).toBe('late timeout');
    expect(releases).toBe(0);
    turns.shift()!();
    await released;
    expect(releases).toBe(1);
    expect(outcomes).toEqual(['a element', 'b element', 'c element', 'd element', 'late timeout', 'e element']);
    expect(waiters.size).toBe(0);
    expect(counts).toEqual([1, 2, 3, 4, 5, 0, 1, 0]);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('LongPollWaiters watching held connections', () => {
  /** A held request's socket, whose earlier answers its client left unacknowledged. */
  const heldConnection = () => ({
    localAddress: '127.0.0.1',
    localPort: 8080,
    remoteAddress: '127.0.0.1',
    remotePort: 50_001,
    bytesWritten: 300_000,
    writableLength: 0,
    resets: 0,
    resetAndDestroy() {
      this.resets++;
    },
  });

  function setup(kernelQueued: number) {
    const time = manualClock(0);
    const connection = heldConnection();
    const queues: KernelSendQueues = {
      snapshot: async (found) => {
        found(connectionKey(connection) as string, kernelQueued);
        return true;
      },
    };
    const monitor = new SendProgressMonitor(1_000, queues, time.clock, async () => undefined);
    const evictions: EvictionReason[] = [];
    const waiters = new LongPollWaiters(10, undefined, {
      limits: { maxQueueBytes: 512 * 1024, stallTimeoutMs: 10_000 },
      onEvicted: (reason) => evictions.push(reason),
      monitor,
    });
    const runUntil = async (ms: number) => {
      while (time.now() + 1_000 <= ms) {
        time.advanceBy(1_000);
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    return { connection, waiters, monitor, evictions, runUntil };
  }

  it('resets a held connection whose client acknowledged nothing for stallTimeoutMs, and ends its wait', async () => {
    const { connection, waiters, monitor, evictions, runUntil } = setup(170_000);
    const held = waiters.wait(60_000, new AbortController().signal, connection);
    await runUntil(1_000 + 9_000);
    expect(await state(held)).toBe('pending');
    await runUntil(1_000 + 10_000);
    expect(await held).toBe('aborted');
    expect(connection.resets).toBe(1);
    expect(evictions).toEqual(['stall']);
    expect(waiters.size).toBe(0);
    expect(monitor.size).toBe(0);
  });

  it('keeps a held connection with nothing outstanding (a client waiting for its answer), and stops watching it once answered', async () => {
    const { connection, waiters, monitor, evictions, runUntil } = setup(0);
    const held = waiters.wait(60_000, new AbortController().signal, connection);
    await runUntil(59_000);
    expect(await state(held)).toBe('pending');
    waiters.release();
    expect(await held).toBe('element');
    expect(monitor.size).toBe(0);
    expect(connection.resets).toBe(0);
    expect(evictions).toEqual([]);
  });
});
