import { describe, expect, it } from 'vitest';
import { gzipVerifySampleClients, isGzipVerifyClient, parseGzipVerifySample } from '../../../src/fleet/gzip-verify-sample.js';

describe('--gzip-verify-sample', () => {
  it('is a share (N%) or a number of clients', () => {
    expect(parseGzipVerifySample('1%')).toEqual({ percent: 1 });
    expect(parseGzipVerifySample('0.5%')).toEqual({ percent: 0.5 });
    expect(parseGzipVerifySample('100%')).toEqual({ percent: 100 });
    expect(parseGzipVerifySample('50')).toEqual({ clients: 50 });
    expect(parseGzipVerifySample('0')).toEqual({ clients: 0 });
    for (const bad of ['', '%', '101%', '-1', '2.5', 'ten', '-3%']) expect(parseGzipVerifySample(bad), bad).toBeUndefined();
  });

  it('rounds a share up to at least one client, and never samples more clients than there are', () => {
    expect(gzipVerifySampleClients({ percent: 1 }, 10_000)).toBe(100);
    expect(gzipVerifySampleClients({ percent: 1 }, 150)).toBe(2);
    expect(gzipVerifySampleClients({ percent: 1 }, 3)).toBe(1);
    expect(gzipVerifySampleClients({ percent: 0 }, 3)).toBe(0);
    expect(gzipVerifySampleClients({ clients: 50 }, 20)).toBe(20);
  });

  it('picks exactly that many clients, spread evenly over the fleet (and so over its worker processes)', () => {
    const picked = (total: number, sample: number) => Array.from({ length: total }, (_, index) => index).filter((index) => isGzipVerifyClient(index, total, sample));
    expect(picked(10_000, 100)).toHaveLength(100);
    expect(picked(1_000, 4)).toEqual([249, 499, 749, 999]);
    // Two workers of 500 clients each: two sample clients each.
    expect(picked(1_000, 4).filter((index) => index < 500)).toHaveLength(2);
    expect(picked(7, 7)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(picked(100, 0)).toEqual([]);
  });
});
