import { describe, expect, it } from 'vitest';
import { gapData, parseEventId, selectResume } from '../../../src/publish/resume.js';

describe('parseEventId', () => {
  it('accepts non-negative decimal integers', () => {
    expect(parseEventId('0')).toBe(0);
    expect(parseEventId(' 42 ')).toBe(42);
  });

  it('treats an absent or empty id as no id', () => {
    expect(parseEventId(undefined)).toBeUndefined();
    expect(parseEventId('')).toBeUndefined();
  });

  it.each(['-1', '1.5', '1e3', 'abc', '0x10', '99999999999999999', '12\n', '\u0000'])('rejects %j', (raw) => {
    expect(parseEventId(raw)).toBeNull();
  });
});

describe('selectResume', () => {
  const log = { oldestSeq: 10, latestSeq: 20 };

  it('without an id, only live elements', () => {
    expect(selectResume(undefined, log)).toEqual({ kind: 'live' });
  });

  it('replays what follows the last seen id, including at both edges of retention', () => {
    expect(selectResume(15, log)).toEqual({ kind: 'replay', fromSeq: 16 });
    expect(selectResume(9, log)).toEqual({ kind: 'replay', fromSeq: 10 });
    expect(selectResume(20, log)).toEqual({ kind: 'replay', fromSeq: 21 });
  });

  it('reports a gap when elements after the id have expired', () => {
    expect(selectResume(8, log)).toEqual({ kind: 'gap', requestedId: 8, fromSeq: 10, reason: 'expired' });
    expect(selectResume(0, log)).toEqual({ kind: 'gap', requestedId: 0, fromSeq: 10, reason: 'expired' });
  });

  it('reports an unknown id (newer than anything published, e.g. before a restart)', () => {
    expect(selectResume(21, log)).toEqual({ kind: 'gap', requestedId: 21, fromSeq: 10, reason: 'unknown' });
  });

  it('handles an empty log', () => {
    expect(selectResume(0, { oldestSeq: undefined, latestSeq: 0 })).toEqual({ kind: 'replay', fromSeq: 1 });
    expect(selectResume(5, { oldestSeq: undefined, latestSeq: 0 })).toEqual({
      kind: 'gap',
      requestedId: 5,
      fromSeq: 1,
      reason: 'unknown',
    });
  });

  it('gapData is JSON naming the requested id, where delivery resumes and why', () => {
    expect(JSON.parse(gapData(3, 10, 'expired'))).toEqual({ requestedId: 3, oldestRetained: 10, reason: 'expired' });
  });
});
