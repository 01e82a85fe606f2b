import { describe, expect, it } from 'vitest';
import { analyzeMal, MAL_SECONDS } from '../../../src/analyze/mal.js';

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

  it('counts whole users only: a fraction of a user is not served', () => {
    expect(analyzeMal(2.5, 10).table.map((row) => row.maxUsers)).toEqual([2, 5, 12, 25, 50, 75]);
  });

  it('tabulates every MAL even without an SSE run, in the order of MAL_SECONDS', () => {
    const mal = analyzeMal(100, undefined);
    expect(mal.table.map((row) => row.malSeconds)).toEqual([...MAL_SECONDS]);
    expect(mal.table.map((row) => row.maxUsers)).toEqual(MAL_SECONDS.map((seconds) => 100 * seconds));
    expect(mal.advice).toMatch(/no cut-off/);
  });

  it('gives no cut-off when polling answered no request at all (0 requests/s), rather than an infinite MAL', () => {
    const mal = analyzeMal(0, 25_000);
    expect(mal.cutoffSeconds).toBeNull();
    expect(mal.table.every((row) => row.maxUsers === 0)).toBe(true);
  });

  it('rounds the cut-off to hundredths of a second, and advises push below it and polling above it', () => {
    // 1 000 clients / 3 req/s = 333.33… s
    const mal = analyzeMal(3, 1_000);
    expect(mal.cutoffSeconds).toBe(333.33);
    expect(mal.advice).toContain('At 3 requests/s, polling serves the 1000 clients that SSE served only if they accept a latency of 333.33 s or more');
    expect(mal.advice).toMatch(/below that MAL, push with SSE; above it, cacheable polling/);
  });
});
