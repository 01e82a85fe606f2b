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

/** Thrown by `wait` when `maxWaiters` requests are already held. */
export class TooManyWaitersError extends Error {
  override readonly name = 'TooManyWaitersError';
}

/**
 * Requests held until the next element (RFC 7240 `Prefer: wait`), at most `maxWaiters` at once.
 * Each waiter owns one timer; `release()` answers them all at the next publish. While a request
 * is held, its connection is watched like a push connection's (`guard`): one whose client has
 * stopped acknowledging what it was sent is reset, and its wait ends 'aborted'.
 */
export class LongPollWaiters {
  readonly #waiters = new Set<(outcome: WaitOutcome) => void>();

  constructor(
    readonly maxWaiters: number,
    readonly onChange: (count: number) => void = () => {},
    readonly guard?: HeldConnectionGuard,
  ) {}

  get size(): number {
    return this.#waiters.size;
  }

  /** Holds a request; `connection` (its socket) is watched while it is held. */
  wait(timeoutMs: number, signal: AbortSignal, connection?: SinkConnection): Promise<WaitOutcome> {
    if (this.#waiters.size >= this.maxWaiters) {
      return Promise.reject(new TooManyWaitersError(`${this.maxWaiters} long-poll requests are already waiting`));
    }
    if (signal.aborted) return Promise.resolve('aborted');
    return new Promise((resolve) => {
      let unwatch = () => {};
      const finish = (outcome: WaitOutcome) => {
        unwatch();
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (this.#waiters.delete(finish)) this.onChange(this.#waiters.size);
        resolve(outcome);
      };
      const onAbort = () => finish('aborted');
      const timer = setTimeout(finish, timeoutMs, 'timeout');
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.add(finish);
      this.onChange(this.#waiters.size);
      const guard = this.guard;
      const reset = connection?.resetAndDestroy?.bind(connection);
      if (connection !== undefined && reset !== undefined && guard !== undefined) {
        unwatch = watchProgress(
          connection,
          guard.limits,
          (reason) => {
            finish('aborted');
            reset();
            guard.onEvicted(reason);
          },
          guard.monitor,
        );
      }
    });
  }

  /** Answers every waiting request with `outcome` (the count changes once, not once per request). */
  release(outcome: WaitOutcome = 'element'): void {
    if (this.#waiters.size === 0) return;
    const waiting = [...this.#waiters];
    this.#waiters.clear();
    this.onChange(0);
    for (const finish of waiting) finish(outcome);
  }
}
