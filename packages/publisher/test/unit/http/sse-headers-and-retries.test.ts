import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shedRetryMs, shedStream } from '../../../src/http/sse-headers-and-retries.js';
import { SeededRandom } from '../../../src/source/seeded-random.js';
import { FUZZ_RUNS } from '../../support/fuzz.js';

/** The share of `values` in each of `bins` equal bins over [low, high]. */
function shares(values: readonly number[], low: number, high: number, bins: number): number[] {
  const counts = new Array<number>(bins).fill(0);
  for (const value of values) counts[Math.min(bins - 1, Math.floor(((value - low) / (high - low)) * bins))]! += 1;
  return counts.map((count) => count / values.length);
}

describe('shedRetryMs (the retry: of a shed EventSource)', () => {
  it('lies between sseRetryMs and the maximum, whatever the random draw (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 600_000 }),
        fc.integer({ min: 0, max: 600_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (sseRetryMs, maxDelayMs, draw) => {
          const retryMs = shedRetryMs(sseRetryMs, maxDelayMs, () => draw);
          expect(Number.isInteger(retryMs)).toBe(true);
          expect(retryMs).toBeGreaterThanOrEqual(sseRetryMs);
          expect(retryMs).toBeLessThanOrEqual(Math.max(sseRetryMs, maxDelayMs));
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('reaches both ends: sseRetryMs for a draw of 0, the maximum for a draw just below 1', () => {
    expect(shedRetryMs(2_000, 5_000, () => 0)).toBe(2_000);
    expect(shedRetryMs(2_000, 5_000, () => 0.9999999)).toBe(5_000);
    expect(shedRetryMs(5_000, 2_000, () => 0.5)).toBe(5_000);
  });

  it('spreads a crowd uniformly over the window: no bunch at sseRetryMs (a deterministic random source)', () => {
    const random = new SeededRandom(20261126);
    const draws = Array.from({ length: 10_000 }, () => shedRetryMs(2_000, 5_000, () => random.next()));
    // max(sseRetryMs, random × max) gave sseRetryMs to 40 % of them (every draw below 0.4).
    expect(draws.filter((retryMs) => retryMs === 2_000).length).toBeLessThan(10);
    // Ten equal bins of 300 ms: each holds 10 % (± 1.5 %, over 4 standard deviations for 10 000 draws).
    for (const share of shares(draws, 2_000, 5_000, 10)) expect(Math.abs(share - 0.1)).toBeLessThan(0.015);
  });

  it('is what the shed stream sends, in retry: and in the event, and Retry-After in whole seconds', () => {
    const { retryAfter, body } = shedStream('PUB_ERR_OVERLOADED', 2_000, 5_000, () => 0.5);
    expect(body.toString()).toBe('retry: 3500\nevent: shed\ndata: {"code":"PUB_ERR_OVERLOADED","retryMs":3500}\n\n');
    expect(retryAfter).toBe('4');
  });
});
