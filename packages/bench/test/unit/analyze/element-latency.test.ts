import { LatencyRecorder } from '@rdf-stream/client';
import { describe, expect, it } from 'vitest';
import { elementLatencies, type MeasuredElement } from '../../../src/analyze/element-latency.js';

const T0 = 1_700_000_000_000;

/** A worker's measurement of one element: these latencies (ms), generated `atSeconds` after T0. */
function measured(seq: number, atSeconds: number, latencies: number[]): MeasuredElement {
  const recorder = new LatencyRecorder();
  for (const latency of latencies) recorder.record(latency);
  return { seq, generatedAtMs: T0 + atSeconds * 1000, histogram: recorder.encode() };
}

describe('elementLatencies', () => {
  // Two workers; element 1 came while the last clients were still being accepted (a 5 s tail).
  const workers = [
    [measured(1, 1, [100, 5_000]), measured(2, 3, [100, 200]), measured(3, 5, [100, 300])],
    [measured(1, 1, [4_000]), measured(2, 3, [150]), measured(3, 5, [120, 110])],
  ];

  it('keeps elements generated before every client was connected out of the headline, and reports them apart', () => {
    const result = elementLatencies(workers, T0, T0 + 2_000);
    expect(result.warmupElements).toBe(1);
    expect(result.headline.count).toBe(7);
    expect(result.headline.max).toBeCloseTo(300, 0);
    expect(result.warmup?.count).toBe(3);
    expect(result.warmup?.max).toBeCloseTo(5_000, -1);
  });

  it('merges each element across workers into one row, in sequence order', () => {
    const rows = elementLatencies([workers[1]!, workers[0]!], T0, T0 + 2_000).perElement;
    expect(rows.map((row) => [row.seq, row.generatedAtSeconds, row.warmup, row.received])).toEqual([
      [1, 1, true, 3],
      [2, 3, false, 3],
      [3, 5, false, 4],
    ]);
    expect(rows[0]!.max).toBeCloseTo(5_000, -1);
    expect(rows[2]!.p50).toBeCloseTo(110, 0);
  });

  it('has no warm-up when every client was connected by the end of the ramp', () => {
    const result = elementLatencies(workers, T0, T0);
    expect(result.warmupElements).toBe(0);
    expect(result.warmup).toBeNull();
    expect(result.headline.count).toBe(10);
  });
});

describe('percentiles from histograms merged across workers', () => {
  it('equal those of all values recorded in one histogram', () => {
    const workers = [new LatencyRecorder(), new LatencyRecorder()];
    const all = new LatencyRecorder();
    for (let index = 0; index < 10_000; index++) {
      const latencyMs = (index * 7919) % 2000;
      workers[index % 2]!.record(latencyMs);
      all.record(latencyMs);
    }
    const merged = new LatencyRecorder();
    for (const worker of workers) merged.merge(worker.encode());
    const { mean, max, ...percentiles } = merged.summary();
    const { mean: expectedMean, max: expectedMax, ...expected } = all.summary();
    expect(percentiles).toEqual(expected);
    expect(mean).toBeCloseTo(expectedMean, 6);
    // The encoding keeps buckets, not the exact maximum: equal within HDR precision (3 digits).
    expect(Math.abs(max - expectedMax) / expectedMax).toBeLessThan(0.001);
  });
});
