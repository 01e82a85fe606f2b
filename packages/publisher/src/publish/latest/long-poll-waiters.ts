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

interface Held {
  readonly timer: NodeJS.Timeout;
  unwatch: () => void;
}

const noop = () => undefined;

/**
 * Requests held until the next element (RFC 7240 `Prefer: wait`), at most `maxWaiters` at once.
 * Each waiter has one timer; `release()` answers them all at the next publish, `batchSize` per
 * event-loop turn. While a request is held, its connection is watched like a push connection's
 * (`guard`): one whose client has stopped acknowledging what it was sent is reset, and its wait
 * ends 'aborted'.
 */
export class LongPollWaiters {
  readonly #waiters = new Map<LongPollWaiter, Held>();
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
    const held: Held = { timer: setTimeout(this.#expire, timeoutMs, waiter), unwatch: noop };
    this.#waiters.set(waiter, held);
    this.#changed();
    const guard = this.guard;
    const reset = connection?.resetAndDestroy?.bind(connection);
    if (connection !== undefined && reset !== undefined && guard !== undefined) {
      held.unwatch = watchProgress(
        connection,
        guard.limits,
        (reason) => {
          if (this.#end(waiter)) waiter.settle('aborted');
          reset();
          guard.onEvicted(reason);
        },
        guard.monitor,
      ).stop;
    }
    return true;
  }

  /** Stops holding `waiter` without telling it anything (its client went away); false if it was not held. */
  cancel(waiter: LongPollWaiter): boolean {
    return this.#end(waiter);
  }

  #end(waiter: LongPollWaiter): boolean {
    const held = this.#waiters.get(waiter);
    if (held === undefined) return false;
    clearTimeout(held.timer);
    held.unwatch();
    this.#waiters.delete(waiter);
    this.#changed();
    return true;
  }

  readonly #expire = (waiter: LongPollWaiter): void => {
    if (this.#end(waiter)) waiter.settle('timeout');
  };

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
    const waiting = [...this.#waiters];
    this.#waiters.clear();
    this.#changed();
    for (let start = 0; start < waiting.length; start += this.#batchSize) {
      if (start > 0) await this.#yield();
      const end = Math.min(start + this.#batchSize, waiting.length);
      for (let index = start; index < end; index++) {
        const [waiter, held] = waiting[index] as [LongPollWaiter, Held];
        clearTimeout(held.timer);
        held.unwatch();
        waiter.settle(outcome);
      }
    }
    for (const listener of this.#releasedListeners) listener();
  }
}
