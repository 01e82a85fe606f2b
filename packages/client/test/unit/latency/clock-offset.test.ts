import { describe, expect, it } from 'vitest';
import { estimateOffset } from '../../../src/latency/clock-offset.js';

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
