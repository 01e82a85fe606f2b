import { describe, expect, it } from 'vitest';
import { MemoryEventLog } from '../../../src/log/memory-event-log.js';

const entry = (seq: number) => ({ seq, payload: `element ${seq}` });

describe('MemoryEventLog', () => {
  it('starts empty at sequence number 1', () => {
    const log = new MemoryEventLog(3);
    expect(log.nextSeq).toBe(1);
    expect(log.latestSeq).toBe(0);
    expect(log.oldestSeq).toBeUndefined();
    expect(log.latest()).toBeUndefined();
  });

  it('keeps exactly `capacity` newest entries (retention limit)', () => {
    const log = new MemoryEventLog<ReturnType<typeof entry>>(3);
    for (let seq = 1; seq <= 3; seq++) log.append(entry(seq));
    expect([log.oldestSeq, log.latestSeq]).toEqual([1, 3]);
    expect(log.get(1)?.payload).toBe('element 1');
    log.append(entry(4));
    expect([log.oldestSeq, log.latestSeq]).toEqual([2, 4]);
    expect(log.get(1)).toBeUndefined();
    expect([2, 3, 4].map((seq) => log.get(seq)?.seq)).toEqual([2, 3, 4]);
    expect(log.latest()?.seq).toBe(4);
  });

  it('refuses an entry out of sequence, and changes nothing', () => {
    const log = new MemoryEventLog(3);
    log.append(entry(1));
    expect(() => log.append(entry(3))).toThrow(/Expected sequence number 2/);
    expect(() => log.append(entry(1))).toThrow(RangeError);
    expect(log.latestSeq).toBe(1);
  });

  it('an empty log can continue a numbering started elsewhere (a worker joining a cluster), a used one cannot', () => {
    const log = new MemoryEventLog<ReturnType<typeof entry>>(3);
    log.startAt(41);
    expect(log.nextSeq).toBe(41);
    expect(log.oldestSeq).toBeUndefined();
    log.append(entry(41));
    expect([log.oldestSeq, log.latestSeq, log.get(41)?.seq]).toEqual([41, 41, 41]);
    expect(() => log.startAt(50)).toThrow(/Only an empty log/);
    expect(() => new MemoryEventLog(3).startAt(0)).toThrow(RangeError);
  });

  it('answers undefined for ids outside the retained range or not integers', () => {
    const log = new MemoryEventLog(2);
    log.append(entry(1));
    expect(log.get(0)).toBeUndefined();
    expect(log.get(2)).toBeUndefined();
    expect(log.get(1.5)).toBeUndefined();
    expect(log.get(Number.NaN)).toBeUndefined();
  });

  it('has a distinct epoch per log unless one is given', () => {
    expect(new MemoryEventLog(1).epoch).not.toBe(new MemoryEventLog(1).epoch);
    expect(new MemoryEventLog(1, 'fixed').epoch).toBe('fixed');
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new MemoryEventLog(0)).toThrow(RangeError);
  });
});
