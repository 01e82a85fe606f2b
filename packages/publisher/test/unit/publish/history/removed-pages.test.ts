import { describe, expect, it } from 'vitest';
import { RemovedPages } from '../../../../src/publish/history/removed-pages.js';

describe('RemovedPages', () => {
  const graceMs = 60_000;

  it('dates a removal when it is first seen, and forgets it at the grace period', () => {
    const removed = new RemovedPages(graceMs);
    removed.observe('e1', 1, 0);
    removed.observe('e1', 3, 5_000);
    expect([1, 2, 3].map((page) => removed.removedAtMs('e1', page, 5_000 + graceMs - 1))).toEqual([5_000, 5_000, undefined]);
    expect(removed.removedAtMs('e1', 1, 5_000 + graceMs)).toBeUndefined();
  });

  it('keeps each removal its own date', () => {
    const removed = new RemovedPages(graceMs);
    removed.observe('e1', 1, 0);
    removed.observe('e1', 2, 1_000);
    removed.observe('e1', 2, 2_000);
    removed.observe('e1', 4, 30_000);
    expect([1, 2, 3].map((page) => removed.removedAtMs('e1', page, 30_000))).toEqual([1_000, 30_000, 30_000]);
    expect([1, 2, 3].map((page) => removed.removedAtMs('e1', page, 61_000))).toEqual([undefined, 30_000, 30_000]);
  });

  it('knows nothing of pages removed before its first observation, of another epoch, or with no grace period', () => {
    const removed = new RemovedPages(graceMs);
    removed.observe('e1', 5, 0);
    expect(removed.removedAtMs('e1', 4, 0)).toBeUndefined();
    removed.observe('e1', 6, 0);
    expect(removed.removedAtMs('e0', 5, 0)).toBeUndefined();
    removed.observe('e2', 1, 0);
    expect(removed.removedAtMs('e1', 5, 0)).toBeUndefined();
    const none = new RemovedPages(0);
    none.observe('e1', 1, 0);
    none.observe('e1', 2, 0);
    expect(none.removedAtMs('e1', 1, 0)).toBeUndefined();
  });
});
