import { describe, expect, it } from 'vitest';
import { LatencyRecorder } from '../../../src/latency/latency-recorder.js';

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
