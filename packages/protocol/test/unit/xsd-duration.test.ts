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
  ])('%s is %i ms', (text, ms) => expect(parseDayTimeDuration(text)).toBe(ms));

  it.each(['', 'P', 'PT', 'P1Y', 'P1M', 'PT-1S', '10S', 'PT1.5H', 'PT1S '])('refuses %j', (text) => {
    expect(parseDayTimeDuration(text)).toBeUndefined();
  });

  it('round-trips through formatDuration', () => expect(parseDayTimeDuration(formatDuration(1_500))).toBe(1_500));
});
