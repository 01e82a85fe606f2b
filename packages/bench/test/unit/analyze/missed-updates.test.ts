import { describe, expect, it } from 'vitest';
import { countUpdates } from '../../../src/analyze/missed-updates.js';

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

  it('includes an element generated exactly at the start, and one exactly at the end grace; not one a millisecond outside', () => {
    const client = [{ connectedAt: undefined, seqs: [] }];
    // From 6 000 to 16 000 - 0: elements 2, 3, 4 — both bounds included.
    expect(countUpdates(published, client, 6_000, 16_000, 0).expected).toBe(3);
    // A millisecond later on either side: element 2 is before the start, element 4 inside the grace.
    expect(countUpdates(published, client, 6_001, 16_000, 0).expected).toBe(2);
    expect(countUpdates(published, client, 6_000, 16_999, 1_000).expected).toBe(2);
    expect(countUpdates(published, client, 6_000, 17_000, 1_000).expected).toBe(3);
  });

  it('measures a client from its first answer exactly: an element generated at that moment is expected', () => {
    expect(countUpdates(published, [{ connectedAt: 11_000, seqs: [] }], 0, 20_000, 0).expected).toBe(2);
    expect(countUpdates(published, [{ connectedAt: 11_001, seqs: [] }], 0, 20_000, 0).expected).toBe(1);
  });

  it('counts an element once however often a client got it, and never one outside the measured window', () => {
    // Element 1 (before the start) and element 9 (never published) do not count as received.
    expect(countUpdates(published, [{ connectedAt: 0, seqs: [1, 2, 2, 2, 9] }], 5_000, 20_000, 0)).toEqual({ expected: 3, received: 1, missed: 2 });
  });

  it('sums over clients, and counts nothing without clients or without published elements', () => {
    const clients = [
      { connectedAt: 0, seqs: [1, 2, 3, 4] },
      { connectedAt: 0, seqs: [4] },
    ];
    expect(countUpdates(published, clients, 0, 20_000, 0)).toEqual({ expected: 8, received: 5, missed: 3 });
    expect(countUpdates(published, [], 0, 20_000, 0)).toEqual({ expected: 0, received: 0, missed: 0 });
    expect(countUpdates(new Map(), clients, 0, 20_000, 0)).toEqual({ expected: 0, received: 0, missed: 0 });
  });
});
