import { describe, expect, it } from 'vitest';
import { cacheHeaders, maxAgeSeconds } from '../../../../src/render/headers/cache-headers.js';

const generatedAtMs = Date.parse('2026-11-22T16:00:00.000Z');
const regular = { generatedAtMs, expectedIntervalMs: 5_000, microCacheSeconds: 1 };

describe('maxAgeSeconds', () => {
  it('is the whole seconds left until the next expected element, rounded down', () => {
    expect(maxAgeSeconds(regular, generatedAtMs)).toBe(5);
    expect(maxAgeSeconds(regular, generatedAtMs + 1)).toBe(4);
    expect(maxAgeSeconds(regular, generatedAtMs + 3_999)).toBe(1);
    expect(maxAgeSeconds(regular, generatedAtMs + 4_001)).toBe(0);
  });

  it('is 0 while the next element is late by less than an interval (it is due any moment)', () => {
    expect(maxAgeSeconds(regular, generatedAtMs + 5_000)).toBe(0);
    expect(maxAgeSeconds(regular, generatedAtMs + 9_999)).toBe(0);
  });

  it('falls back to the micro-cache once the source is more than an interval late', () => {
    expect(maxAgeSeconds(regular, generatedAtMs + 10_000)).toBe(1);
    expect(maxAgeSeconds(regular, generatedAtMs + 60_000)).toBe(1);
  });

  it('is 0 for a stream faster than a second (4 Hz): a client never keeps an element past the next one', () => {
    const fast = { ...regular, expectedIntervalMs: 250 };
    expect(maxAgeSeconds(fast, generatedAtMs)).toBe(0);
    expect(maxAgeSeconds(fast, generatedAtMs + 249)).toBe(0);
    expect(maxAgeSeconds(fast, generatedAtMs + 499)).toBe(0);
  });

  it('never exceeds limitSeconds (the history root: its grace period), micro-cache included', () => {
    expect(maxAgeSeconds({ ...regular, expectedIntervalMs: 3_600_000, limitSeconds: 60 }, generatedAtMs)).toBe(60);
    expect(maxAgeSeconds({ ...regular, expectedIntervalMs: 3_600_000, limitSeconds: 60 }, generatedAtMs + 3_541_000)).toBe(59);
    expect(maxAgeSeconds({ ...regular, expectedIntervalMs: null, microCacheSeconds: 5, limitSeconds: 2 }, generatedAtMs)).toBe(2);
    expect(cacheHeaders({ ...regular, microCacheSeconds: 5, limitSeconds: 0 }, generatedAtMs + 4_500)['cache-control']).toBe('public, max-age=0');
    expect(cacheHeaders({ ...regular, microCacheSeconds: 5, limitSeconds: 3 }, generatedAtMs + 4_500)['cache-control']).toBe('public, max-age=0, s-maxage=3');
  });

  it('micro-caches irregular streams', () => {
    expect(maxAgeSeconds({ ...regular, expectedIntervalMs: null, microCacheSeconds: 1 }, generatedAtMs)).toBe(1);
  });
});

describe('cacheHeaders', () => {
  it('gives shared caches the micro-cache when clients may not cache', () => {
    expect(cacheHeaders(regular, generatedAtMs + 4_500)['cache-control']).toBe('public, max-age=0, s-maxage=1');
    expect(cacheHeaders({ ...regular, microCacheSeconds: 0 }, generatedAtMs + 4_500)['cache-control']).toBe('public, max-age=0');
  });

  it('gives Cache-Control, an Expires consistent with it and Last-Modified', () => {
    const now = generatedAtMs + 1_500;
    expect(cacheHeaders(regular, now)).toEqual({
      'cache-control': 'public, max-age=3',
      expires: new Date(now + 3_000).toUTCString(),
      'last-modified': 'Sun, 22 Nov 2026 16:00:00 GMT',
    });
  });
});
