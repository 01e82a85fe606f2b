import { describe, expect, it } from 'vitest';
import { backoffDelay, retryAfterMs } from '../../../src/transport/backoff.js';

describe('backoff', () => {
  const options = { initialDelayMs: 100, maxDelayMs: 1000 };

  it('grows exponentially up to the cap, with full jitter, never below the floor', () => {
    expect(backoffDelay(0, { ...options, random: () => 1 })).toBe(100);
    expect(backoffDelay(3, { ...options, random: () => 1 })).toBe(800);
    expect(backoffDelay(10, { ...options, random: () => 1 })).toBe(1000);
    expect(backoffDelay(10, { ...options, random: () => 0 })).toBe(0);
    expect(backoffDelay(0, { ...options, random: () => 0 }, 2000)).toBe(2000);
    expect(backoffDelay(0, { ...options, random: () => 1 }, 2000)).toBe(2100);
  });

  it('spreads retries above the floor, so that clients cut at the same moment do not return together', () => {
    const delays = Array.from({ length: 1_000 }, () => backoffDelay(0, { initialDelayMs: 500, maxDelayMs: 5_000 }, 2_000));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(2_000);
    expect(Math.max(...delays)).toBeLessThanOrEqual(2_500);
    // a thousand draws of a uniform 0–500 ms jitter: far more than a handful of distinct delays
    expect(new Set(delays).size).toBeGreaterThan(200);
  });

  it('reads Retry-After in seconds or as a date', () => {
    expect(retryAfterMs('7')).toBe(7000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});
