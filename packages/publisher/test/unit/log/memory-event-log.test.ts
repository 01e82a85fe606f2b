import { describe, expect, it } from 'vitest';
import { MemoryEventLog } from '../../../src/log/memory-event-log.js';
import { loggedElement } from '../../support/logged-element.js';

const retention = (retainedElements: number, retainedSeconds = 0) => ({ retainedElements, retainedSeconds });

async function appendAll(log: MemoryEventLog, from: number, to: number): Promise<void> {
  for (let seq = from; seq <= to; seq++) await log.append(loggedElement(seq));
}

describe('MemoryEventLog', () => {
  it('tells when each retained page started, and nothing for a page removed or not begun', async () => {
    const log = new MemoryEventLog(4, retention(6));
    await appendAll(log, 1, 10);
    expect([await log.pageStartedAt(1), await log.pageStartedAt(2), await log.pageStartedAt(3), await log.pageStartedAt(4)]).toEqual([
      undefined,
      loggedElement(5).generatedAt,
      loggedElement(9).generatedAt,
      undefined,
    ]);
  });

  it('starts empty at sequence number 1, with an epoch of its own', () => {
    const log = new MemoryEventLog(4, retention(8));
    expect(log.nextSeq).toBe(1);
    expect(log.latestSeq).toBe(0);
    expect(log.oldestSeq).toBeUndefined();
    expect(log.latest()).toBeUndefined();
    expect(log.epoch).toMatch(/^[a-z0-9]{10}$/);
    expect(new MemoryEventLog(4, retention(8)).epoch).not.toBe(log.epoch);
  });

  it('removes whole pages only, keeping at least retainedElements (the limit)', async () => {
    const log = new MemoryEventLog(4, retention(6));
    await appendAll(log, 1, 8);
    // 8 elements, limit 6: element 3 is on page 1 (1–4), so page 1 stays.
    expect([log.oldestSeq, log.latestSeq]).toEqual([1, 8]);
    await log.append(loggedElement(9));
    // The 6th newest is 4, still page 1.
    expect(log.oldestSeq).toBe(1);
    await log.append(loggedElement(10));
    // The 6th newest is 5: page 1 goes, whole.
    expect(log.oldestSeq).toBe(5);
    expect(await log.get(4)).toBeUndefined();
    expect((await log.read(1, 100)).map((element) => element.seq)).toEqual([5, 6, 7, 8, 9, 10]);
  });

  it('removes closed pages older than retainedSeconds, never the newest page', async () => {
    const log = new MemoryEventLog(2, retention(1_000, 60), { now: () => 1_800_000_000_000 + 200_000 });
    await appendAll(log, 1, 5);
    // Elements are 1 s apart from 1 800 000 001 000 ms: all older than 60 s at now.
    await log.applyRetention();
    expect([log.oldestSeq, log.latestSeq]).toEqual([5, 5]);
    expect(log.latest()?.seq).toBe(5);
  });

  it('refuses an element out of sequence, and changes nothing', async () => {
    const log = new MemoryEventLog(4, retention(8));
    await log.append(loggedElement(1));
    await expect(log.append(loggedElement(3))).rejects.toThrow(/Expected sequence number 2/);
    await expect(log.append(loggedElement(1))).rejects.toThrow(/Expected sequence number 2/);
    expect([log.oldestSeq, log.latestSeq, log.nextSeq]).toEqual([1, 1, 2]);
  });

  it('announces each durable element to its listeners', async () => {
    const log = new MemoryEventLog(4, retention(8));
    const announced: number[] = [];
    log.onAppended((latestSeq) => announced.push(latestSeq));
    await appendAll(log, 1, 3);
    expect(announced).toEqual([1, 2, 3]);
  });

  it('as a replica, starts at the first element it is given', async () => {
    const log = new MemoryEventLog(4, retention(8), { replica: true, epoch: 'writer' });
    await log.append(loggedElement(41));
    await log.append(loggedElement(42));
    expect([log.epoch, log.oldestSeq, log.latestSeq]).toEqual(['writer', 41, 42]);
  });

  it('reads consecutive elements from a sequence number', async () => {
    const log = new MemoryEventLog(4, retention(8));
    await appendAll(log, 1, 6);
    expect((await log.read(3, 2)).map((element) => element.seq)).toEqual([3, 4]);
    expect((await log.read(5, 10)).map((element) => element.seq)).toEqual([5, 6]);
    expect(await log.read(7, 10)).toEqual([]);
  });
});
