/** The freshness of `/latest`: cacheable until the next element is expected. */
export interface CacheHeaders {
  readonly 'cache-control': string;
  readonly expires: string;
  readonly 'last-modified': string;
}

export interface Freshness {
  /** When the element being served was generated (ms since epoch). */
  readonly generatedAtMs: number;
  /** Expected milliseconds between elements, or null for an irregular stream. */
  readonly expectedIntervalMs: number | null;
  readonly microCacheSeconds: number;
  /** The longest any cache may keep the document (seconds), whatever the above says; none by default. */
  readonly limitSeconds?: number;
}

/**
 * Whole seconds a cache may keep the latest element: until the next element is due, rounded
 * down so that no cache serves it past that moment. A next element that is late by less than
 * an interval is due any moment: 0. The micro-cache (study §6: thundering-herd protection) is for
 * irregular streams and for a stream more than an interval late (its source has stalled).
 */
export function maxAgeSeconds(freshness: Freshness, nowMs: number): number {
  const { generatedAtMs, expectedIntervalMs, limitSeconds = Number.POSITIVE_INFINITY } = freshness;
  const microCacheSeconds = Math.min(freshness.microCacheSeconds, limitSeconds);
  if (expectedIntervalMs === null) return microCacheSeconds;
  const remainingMs = generatedAtMs + expectedIntervalMs - nowMs;
  if (remainingMs > 0) return Math.min(Math.floor(remainingMs / 1000), limitSeconds);
  return -remainingMs < expectedIntervalMs ? 0 : microCacheSeconds;
}

/**
 * `Cache-Control`, `Expires` and `Last-Modified` for `/latest` at `nowMs`. When clients must
 * not cache (max-age=0: the next element is due within the second), shared caches still get the
 * micro-cache (`s-maxage`) so that nginx or Varnish send one request per second to the
 * publisher instead of one per client (study §6), while clients polling the publisher directly
 * lose nothing.
 */
export function cacheHeaders(freshness: Freshness, nowMs: number): CacheHeaders {
  const maxAge = maxAgeSeconds(freshness, nowMs);
  const microCacheSeconds = Math.min(freshness.microCacheSeconds, freshness.limitSeconds ?? Number.POSITIVE_INFINITY);
  const shared = maxAge === 0 && microCacheSeconds > 0 ? `, s-maxage=${microCacheSeconds}` : '';
  return {
    'cache-control': `public, max-age=${maxAge}${shared}`,
    expires: new Date(nowMs + maxAge * 1000).toUTCString(),
    'last-modified': new Date(freshness.generatedAtMs).toUTCString(),
  };
}
