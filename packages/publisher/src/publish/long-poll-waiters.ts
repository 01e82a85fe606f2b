export type WaitOutcome = 'element' | 'timeout' | 'aborted';

/** Thrown by `wait` when `maxWaiters` requests are already held. */
export class TooManyWaitersError extends Error {
  override readonly name = 'TooManyWaitersError';
}

/**
 * Requests held until the next element (RFC 7240 `Prefer: wait`), at most `maxWaiters` at once.
 * Each waiter owns one timer; `release()` answers them all at the next publish.
 */
export class LongPollWaiters {
  readonly #waiters = new Set<(outcome: WaitOutcome) => void>();

  constructor(
    readonly maxWaiters: number,
    readonly onChange: (count: number) => void = () => {},
  ) {}

  get size(): number {
    return this.#waiters.size;
  }

  wait(timeoutMs: number, signal: AbortSignal): Promise<WaitOutcome> {
    if (this.#waiters.size >= this.maxWaiters) {
      return Promise.reject(new TooManyWaitersError(`${this.maxWaiters} long-poll requests are already waiting`));
    }
    if (signal.aborted) return Promise.resolve('aborted');
    return new Promise((resolve) => {
      const finish = (outcome: WaitOutcome) => {
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
