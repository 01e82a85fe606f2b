import { describe, expect, it } from 'vitest';
import { LatencyRecorder } from '@rdf-stream/client';
import { analyzeMal } from '../../src/analyze/mal.js';
import { countUpdates } from '../../src/analyze/missed-updates.js';
import { elementStamp } from '../../src/fleet/timestamp.js';
import { facilitiesForPayload, sourceAddresses } from '../../src/scenario/bench-options.js';

describe('countUpdates', () => {
  const published = new Map([
    [1, 1_000],
    [2, 6_000],
    [3, 11_000],
    [4, 16_000],
  ]);

  it('expects the elements generated from the measurement start or the client\'s first answer, until the end grace', () => {
    const clients = [
      { connectedAt: 0, seqs: [2, 3] }, // measured from 5 000: expects 2, 3 (4 falls in the end grace)
      { connectedAt: 7_000, seqs: [3] }, // first answered at 7 000: expects 3 only
    ];
    expect(countUpdates(published, clients, 5_000, 16_500, 1_000)).toEqual({ expected: 3, received: 3, missed: 0 });
  });

  it('counts what a client never got as missed, and everything for a client never answered', () => {
    expect(countUpdates(published, [{ connectedAt: 0, seqs: [2] }], 0, 20_000, 1_000)).toEqual({ expected: 4, received: 1, missed: 3 });
    expect(countUpdates(published, [{ connectedAt: undefined, seqs: [] }], 5_000, 20_000, 1_000)).toEqual({ expected: 3, received: 0, missed: 3 });
  });
});

describe('elementStamp', () => {
  it('reads the timestamp and sequence number from a real Turtle element', () => {
    const turtle = '@prefix prov: <http://www.w3.org/ns/prov#>.\n\n<http://127.0.0.1:8080/streams/parking/elements/demo2026ab-42> prov:generatedAtTime "2026-11-22T16:20:05.123Z"^^xsd:dateTime.\n';
    expect(elementStamp(turtle)).toEqual({ seq: 42, generatedAtMs: Date.parse('2026-11-22T16:20:05.123Z') });
    expect(elementStamp('garbage')).toBeUndefined();
  });
});

describe('scenario helpers', () => {
  it('sizes elements like the study (5.2 kB ≈ 13 facilities)', () => {
    expect(facilitiesForPayload(5_200)).toBe(12);
    expect(facilitiesForPayload(5_400)).toBe(13);
  });

  it('spreads connections over several 127.0.0.x addresses beyond 20 000 per address', () => {
    expect(sourceAddresses(8_000)).toEqual(['127.0.0.1']);
    expect(sourceAddresses(25_000)).toEqual(['127.0.0.1', '127.0.0.2']);
  });
});

describe('analyzeMal (formula 1: maxRequestsPerSecond ≥ users / MAL)', () => {
  it('tabulates the users servable at each MAL and the cut-off against the largest SSE run', () => {
    const mal = analyzeMal(2_520, 25_000);
    expect(mal.table).toEqual([
      { malSeconds: 1, maxUsers: 2_520 },
      { malSeconds: 2, maxUsers: 5_040 },
      { malSeconds: 5, maxUsers: 12_600 },
      { malSeconds: 10, maxUsers: 25_200 },
      { malSeconds: 20, maxUsers: 50_400 },
      { malSeconds: 30, maxUsers: 75_600 },
    ]);
    // The study's figures: 2.52 k req/s serve 25 000 users at a MAL of ~10 s.
    expect(mal.cutoffSeconds).toBe(9.92);
    expect(mal.advice).toMatch(/latency of 9\.92 s or more/);
  });

  it('gives no cut-off without an SSE run that met its target', () => {
    expect(analyzeMal(1_000, undefined).cutoffSeconds).toBeNull();
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
