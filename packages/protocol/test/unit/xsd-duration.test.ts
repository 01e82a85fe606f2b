import { describe, expect, it } from 'vitest';
import { formatDuration, parseDayTimeDuration } from '../../src/index.js';

describe('parseDayTimeDuration', () => {
  it.each([
    ['PT10S', 10_000],
    ['PT10s', 10_000],
    ['PT0.25S', 250],
    ['PT1M30S', 90_000],
    ['P1DT2H', 93_600_000],
    ['P2D', 172_800_000],
    // What RSP-QL windows write (RANGE PT30S STEP PT10S): the client's queries read durations here too.
    ['PT30S', 30_000],
    ['PT0.5S', 500],
    ['PT0.001S', 1],
    ['PT2H', 7_200_000],
    ['P1D', 86_400_000],
    ['pt1m', 60_000],
  ])('%s is %i ms', (text, ms) => expect(parseDayTimeDuration(text)).toBe(ms));

  it.each(['', 'P', 'PT', 'P1Y', 'P1M', 'PT-1S', '10S', 'PT1.5H', 'PT1S ', ' PT1S', 'P1DT', 'PT0.0001S', 'PT1234567890S'])('refuses %j', (text) => {
    expect(parseDayTimeDuration(text)).toBeUndefined();
  });

  it('round-trips through formatDuration', () => {
    expect(formatDuration(1_500)).toBe('PT1.5S');
    expect(parseDayTimeDuration(formatDuration(1_500))).toBe(1_500);
    expect(parseDayTimeDuration(formatDuration(86_400_000))).toBe(86_400_000);
  });
});
