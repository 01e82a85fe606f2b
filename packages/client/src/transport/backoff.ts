/** Reconnection delays: exponential with full jitter, so that thousands of clients spread out. */
export interface BackoffOptions {
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly random?: () => number;
}

/**
 * Delay before retry number `attempt` (0-based): `floorMs` (e.g. the server's `retry:`) plus a
 * random part of the exponential ceiling. The jitter goes on top of the floor, not under it: were
 * it clamped to the floor, every client cut at the same moment (a publisher killed) would come
 * back at the same moment, `retry:` later, and overflow the restarted publisher's accept queue.
 */
export function backoffDelay(attempt: number, options: BackoffOptions, floorMs = 0): number {
  const { initialDelayMs, maxDelayMs, random = Math.random } = options;
  const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(attempt, 30));
  return floorMs + Math.round(random() * ceiling);
}

/** Milliseconds asked by a `Retry-After` header (seconds or an HTTP date), or undefined. */
export function retryAfterMs(header: string | null | undefined, nowMs = Date.now()): number | undefined {
  if (header === null || header === undefined || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** Resolves after `ms`, or at once (false) when `signal` aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve(false);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
