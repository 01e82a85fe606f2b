import { setImmediate as nextTurn } from 'node:timers/promises';
import { defaults } from '../../config/defaults.js';
import { type EvictionReason, type SinkConnection, type SubscriberQueueLimits, watchProgress } from '../sse/guarded-sink.js';
import type { SendProgressMonitor } from '../sse/send-progress-monitor.js';

export type WaitOutcome = 'element' | 'timeout' | 'aborted';

/**
 * How a held request's connection is watched: the limits of every push connection, counted in
 * what its client has not acknowledged (e.g. earlier answers on a pipelined keep-alive
 * connection whose client stopped reading them).
 */
export interface HeldConnectionGuard {
  readonly limits: SubscriberQueueLimits;
  /** Called once when a held request's connection is cut for holding too much. */
  onEvicted(reason: EvictionReason): void;
  /** Default: the process's monitor for `limits.progressCheckMs`. */
  readonly monitor?: SendProgressMonitor;
}

/** How `release` answers many held requests: so many per event-loop turn. */
export interface ReleaseBatching {
  /** Held requests answered per event-loop turn (`broadcastBatchSize`). */
  readonly batchSize: number;
  /** Yields to the event loop between batches; injectable for tests. */
  readonly yieldTurn?: () => Promise<unknown>;
}

/**
 * A held request as the waiters see it: told once how its wait ended, unless it was cancelled.
 * A held connection (`http/held-long-polls.ts`) is one, with no promise or timer of its own.
 */
export interface LongPollWaiter {
  settle(outcome: WaitOutcome): void;
}

/** Thrown by `wait` when `maxWaiters` requests are already held. */
export class TooManyWaitersError extends Error {
  override readonly name = 'TooManyWaitersError';
}

/**
 * The requests held for one duration, in the order they were held, which is the order of their
 * deadlines (a monotonic clock): one timer for the first, none per request. An entry whose
 * request was answered or cancelled meanwhile stays until its deadline or the next release, and
 * is then skipped (its hold's number is no longer the request's).
 */
class DeadlineQueue {
  waiters: Array<LongPollWaiter | undefined> = [];
  /** The number of each entry's hold (`LongPollWaiters.#waiters`' values). */
  holds: number[] = [];
  /** Each entry's deadline, milliseconds on `performance.now()`'s clock. */
  deadlines: number[] = [];
  /** The first entry not yet due. */
  head = 0;
  timer: NodeJS.Timeout | undefined = undefined;

  get length(): number {
    return this.waiters.length - this.head;
  }

  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.waiters = [];
    this.holds = [];
    this.deadlines = [];
    this.head = 0;
  }
}

/**
 * Entries of requests answered or cancelled before their deadline that a queue keeps beyond
 * those still held (entries): past it, the next hold in that queue drops them all.
 */
export const STALE_ENTRIES_KEPT = 1_024;

/**
 * Requests held until the next element (RFC 7240 `Prefer: wait`), at most `maxWaiters` at once.
 * Their waits end by duration: the requests held for one duration wait in one queue, ordered by
 * deadline, with one timer (`DeadlineQueue`), so that holding a request allocates no timer of
 * its own (measured: a timer per request lived as long as its request, past two young-generation
 * collections, and every one was copied into the old generation). `release()` answers them all
 * at the next publish, `batchSize` per event-loop turn. While a request is held, its connection
 * is watched like a push connection's (`guard`): one whose client has stopped acknowledging what
 * it was sent is reset, and its wait ends 'aborted'.
 */
export class LongPollWaiters {
  /** Each held request, with the number of its hold. */
  readonly #waiters = new Map<LongPollWaiter, number>();
  /** How to stop watching the connections of the held requests that came with one. */
  #unwatch = new Map<LongPollWaiter, () => void>();
  /** The held requests by the duration of their wait (milliseconds). */
  readonly #queues = new Map<number, DeadlineQueue>();
  #holds = 0;
  readonly #sizeListeners = new Set<() => void>();
  readonly #releasedListeners = new Set<() => void>();
  readonly #batchSize: number;
  readonly #yield: () => Promise<unknown>;

  constructor(
    readonly maxWaiters: number,
    readonly onChange: (count: number) => void = () => {},
    readonly guard?: HeldConnectionGuard,
    batching: ReleaseBatching = { batchSize: defaults.broadcastBatchSize },
  ) {
    this.#batchSize = batching.batchSize;
    this.#yield = batching.yieldTurn ?? (() => nextTurn());
  }

  get size(): number {
    return this.#waiters.size;
  }

  /**
   * Entries in the deadline queues (entries): one per held request, and those of requests
   * answered or cancelled before their deadline, until their deadline or the next release; past
   * `STALE_ENTRIES_KEPT` in a queue, its next hold drops them, and none is kept once nothing is held.
   */
  get queuedEntries(): number {
    let entries = 0;
    for (const queue of this.#queues.values()) entries += queue.length;
    return entries;
  }

  /**
   * Calls `listener` after each change of `size` (what a test awaits instead of polling it);
   * returns the function that stops it.
   */
  onSizeChanged(listener: () => void): () => void {
    this.#sizeListeners.add(listener);
    return () => this.#sizeListeners.delete(listener);
  }

  /** Calls `listener` each time a `release` has told every request it answers; returns the function that stops it. */
  onReleased(listener: () => void): () => void {
    this.#releasedListeners.add(listener);
    return () => this.#releasedListeners.delete(listener);
  }

  #changed(): void {
    this.onChange(this.#waiters.size);
    for (const listener of this.#sizeListeners) listener();
  }

  /**
   * Holds `waiter` until `release`, `timeoutMs` ('timeout'), `cancel` (no answer) or the eviction
   * of `connection` ('aborted', after which the connection is reset). Returns false, holding
   * nothing, when `maxWaiters` are held already.
   */
  hold(waiter: LongPollWaiter, timeoutMs: number, connection?: SinkConnection): boolean {
    if (this.#waiters.size >= this.maxWaiters) return false;
    const hold = ++this.#holds;
    this.#waiters.set(waiter, hold);
    this.#enqueue(waiter, hold, timeoutMs);
    this.#changed();
    const guard = this.guard;
    const reset = connection?.resetAndDestroy?.bind(connection);
    if (connection !== undefined && reset !== undefined && guard !== undefined) {
      const { stop } = watchProgress(
        connection,
        guard.limits,
        (reason) => {
          if (this.#end(waiter)) waiter.settle('aborted');
          reset();
          guard.onEvicted(reason);
        },
        guard.monitor,
      );
      this.#unwatch.set(waiter, stop);
    }
    return true;
  }

  /** Stops holding `waiter` without telling it anything (its client went away); false if it was not held. */
  cancel(waiter: LongPollWaiter): boolean {
    return this.#end(waiter);
  }

  #end(waiter: LongPollWaiter): boolean {
    if (!this.#waiters.delete(waiter)) return false;
    if (this.#unwatch.size > 0) this.#stopWatching(this.#unwatch, waiter);
    // Nothing held: no timer left for entries that are all answered or cancelled.
    if (this.#waiters.size === 0) this.#clearQueues();
    this.#changed();
    return true;
  }

  #stopWatching(unwatch: Map<LongPollWaiter, () => void>, waiter: LongPollWaiter): void {
    const stop = unwatch.get(waiter);
    if (stop === undefined) return;
    unwatch.delete(waiter);
    stop();
  }

  #enqueue(waiter: LongPollWaiter, hold: number, timeoutMs: number): void {
    let queue = this.#queues.get(timeoutMs);
    if (queue === undefined) {
      queue = new DeadlineQueue();
      this.#queues.set(timeoutMs, queue);
    }
    // At most `size - 1` of its entries are held (not this one): the others are stale.
    if (queue.length - (this.#waiters.size - 1) > STALE_ENTRIES_KEPT) this.#dropStale(queue);
    queue.waiters.push(waiter);
    queue.holds.push(hold);
    queue.deadlines.push(performance.now() + timeoutMs);
    if (queue.timer === undefined) this.#arm(queue);
  }

  /** Sets `queue`'s timer for its first deadline (none when it is empty). */
  #arm(queue: DeadlineQueue): void {
    if (queue.length === 0) {
      queue.clear();
      return;
    }
    const delayMs = Math.max(1, Math.ceil((queue.deadlines[queue.head] as number) - performance.now()));
    queue.timer = setTimeout(this.#expireDue, delayMs, queue);
  }

  /** Ends with 'timeout' the waits of `queue` that are due, then sets its timer for the next. */
  readonly #expireDue = (queue: DeadlineQueue): void => {
    queue.timer = undefined;
    const now = performance.now();
    while (queue.head < queue.waiters.length && (queue.deadlines[queue.head] as number) <= now) {
      const index = queue.head++;
      const waiter = queue.waiters[index] as LongPollWaiter;
      queue.waiters[index] = undefined;
      if (this.#waiters.get(waiter) === queue.holds[index] && this.#end(waiter)) waiter.settle('timeout');
    }
    // Settling may have released or cleared the queue (and set its timer again).
    if (queue.timer !== undefined) return;
    if (queue.head > STALE_ENTRIES_KEPT && queue.head * 2 > queue.waiters.length) this.#dropStale(queue);
    this.#arm(queue);
  };

  /** Keeps the entries of `queue` that are still held (and not due), in order. */
  #dropStale(queue: DeadlineQueue): void {
    const { waiters, holds, deadlines } = queue;
    let kept = 0;
    for (let index = queue.head; index < waiters.length; index++) {
      const waiter = waiters[index] as LongPollWaiter;
      if (this.#waiters.get(waiter) !== holds[index]) continue;
      waiters[kept] = waiter;
      holds[kept] = holds[index] as number;
      deadlines[kept] = deadlines[index] as number;
      kept++;
    }
    waiters.length = kept;
    holds.length = kept;
    deadlines.length = kept;
    queue.head = 0;
  }

  #clearQueues(): void {
    for (const queue of this.#queues.values()) queue.clear();
  }

  /**
   * Holds a request as a promise of its outcome; `signal` is its client going away ('aborted').
   * Rejects with `TooManyWaitersError` when `maxWaiters` are held already.
   */
  wait(timeoutMs: number, signal: AbortSignal, connection?: SinkConnection): Promise<WaitOutcome> {
    if (this.#waiters.size >= this.maxWaiters) {
      return Promise.reject(new TooManyWaitersError(`${this.maxWaiters} long-poll requests are already waiting`));
    }
    if (signal.aborted) return Promise.resolve('aborted');
    return new Promise((resolve) => {
      const onAbort = () => {
        if (this.cancel(waiter)) waiter.settle('aborted');
      };
      const waiter: LongPollWaiter = {
        settle: (outcome) => {
          signal.removeEventListener('abort', onAbort);
          resolve(outcome);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.hold(waiter, timeoutMs, connection);
    });
  }

  /**
   * Answers every held request with `outcome`, `batchSize` per event-loop turn (the first batch
   * at once); the count changes once, not once per request. Resolves when every one was told.
   * A request held meanwhile waits for the next release.
   */
  async release(outcome: WaitOutcome = 'element'): Promise<void> {
    if (this.#waiters.size === 0) return;
    const waiting = [...this.#waiters.keys()];
    const unwatch = this.#unwatch;
    this.#waiters.clear();
    this.#unwatch = new Map();
    this.#clearQueues();
    this.#changed();
    for (let start = 0; start < waiting.length; start += this.#batchSize) {
      if (start > 0) await this.#yield();
      const end = Math.min(start + this.#batchSize, waiting.length);
      for (let index = start; index < end; index++) {
        const waiter = waiting[index] as LongPollWaiter;
        if (unwatch.size > 0) this.#stopWatching(unwatch, waiter);
        waiter.settle(outcome);
      }
    }
    for (const listener of this.#releasedListeners) listener();
  }
}
