import { describe, expect, it } from 'vitest';
import { estimateOffset } from '../../src/latency/clock-offset.js';
import { LatencyRecorder } from '../../src/latency/latency-recorder.js';
import { backoffDelay, retryAfterMs } from '../../src/transport/backoff.js';

describe('estimateOffset', () => {
  it('takes the sample with the shortest round trip, offset = server time − midpoint', () => {
    const offset = estimateOffset([
      { sentAt: 1000, serverTime: 1600, receivedAt: 1100 }, // rtt 100 → offset 550
      { sentAt: 2000, serverTime: 2510, receivedAt: 2020 }, // rtt 20 → offset 500
      { sentAt: 3000, serverTime: 3700, receivedAt: 3300 },
    ]);
    expect(offset).toEqual({ offsetMs: 500, uncertaintyMs: 10, samples: 3 });
  });

  it('needs a sample', () => {
    expect(() => estimateOffset([])).toThrow(RangeError);
  });
});

describe('LatencyRecorder', () => {
  it('gives percentiles within HDR precision (3 significant digits)', () => {
    const recorder = new LatencyRecorder();
    for (let ms = 1; ms <= 1000; ms++) recorder.record(ms);
    const summary = recorder.summary();
    expect(summary.count).toBe(1000);
    expect(summary.p50).toBeCloseTo(500, -1);
    expect(summary.p99).toBeCloseTo(990, -1);
    expect(summary.max).toBeCloseTo(1000, -1);
    expect(summary.mean).toBeCloseTo(500.5, 0);
  });

  it('keeps sub-millisecond latencies', () => {
    const recorder = new LatencyRecorder();
    recorder.record(0.25);
    expect(recorder.percentile(50)).toBeCloseTo(0.25, 3);
  });

  it('merges histograms encoded in another process', () => {
    const a = new LatencyRecorder();
    const b = new LatencyRecorder();
    for (let i = 0; i < 100; i++) a.record(10);
    for (let i = 0; i < 100; i++) b.record(1000);
    const merged = new LatencyRecorder();
    merged.merge(a.encode());
    merged.merge(b);
    expect(merged.count).toBe(200);
    expect(merged.percentile(25)).toBeCloseTo(10, 0);
    expect(merged.percentile(75)).toBeCloseTo(1000, -1);
  });

  it('counts negative latencies (clock error) and records them as 0', () => {
    const recorder = new LatencyRecorder();
    recorder.record(-3);
    expect([recorder.negative, recorder.count, recorder.percentile(100)]).toEqual([1, 1, 0]);
  });
});

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
