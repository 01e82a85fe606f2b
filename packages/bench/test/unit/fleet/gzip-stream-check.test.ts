import { describe, expect, it } from 'vitest';
import { GzipStreamCheck } from '../../../src/fleet/gzip-stream-check.js';

describe('GzipStreamCheck', () => {
  it('confirms each text the cheap reading gave once the decoder has given the same characters, in whatever pieces', () => {
    const check = new GzipStreamCheck();
    check.read('id: 1\ndata: a\n\n');
    expect(check.verified).toBe(0);
    check.decoded('id: 1\nda');
    check.decoded('ta: a\n\nid: 2');
    expect(check.verified).toBe(1);
    check.read('id: 2\ndata: b\n\n');
    check.decoded('\ndata: b\n\n');
    expect([check.verified, check.mismatches]).toEqual([2, 0]);
  });

  it('counts a text that differs from what the decoder gave as a mismatch', () => {
    const check = new GzipStreamCheck();
    check.decoded('id: 1\ndata: a\n\n');
    check.read('id: 1\ndata: X\n\n');
    expect([check.verified, check.mismatches]).toEqual([0, 1]);
  });
});
