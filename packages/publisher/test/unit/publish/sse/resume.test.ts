import { describe, expect, it } from 'vitest';
import { gapData, parseEventId, type RequestedEventId, selectResume, streamGapHeader } from '../../../../src/publish/sse/resume.js';

const id = (seq: number, epoch = 'life1'): RequestedEventId => ({ raw: `${epoch}-${seq}`, epoch, seq });
/** A bare number, as sent by a client that last saw an id from before ids carried their epoch. */
const bareId = (seq: number): RequestedEventId => ({ raw: String(seq), epoch: undefined, seq });

describe('parseEventId', () => {
  it('accepts element ids ({epoch}-{seq}) and, for ids of no known life, bare integers', () => {
    expect(parseEventId('life1-42')).toEqual({ raw: 'life1-42', epoch: 'life1', seq: 42 });
    expect(parseEventId(' life1-42 ')).toEqual({ raw: 'life1-42', epoch: 'life1', seq: 42 });
    expect(parseEventId('0')).toEqual({ raw: '0', epoch: undefined, seq: 0 });
    expect(parseEventId('42')).toEqual({ raw: '42', epoch: undefined, seq: 42 });
  });

  it('treats an absent or empty id as no id', () => {
    expect(parseEventId(undefined)).toBeUndefined();
    expect(parseEventId('')).toBeUndefined();
  });

  it.each(['-1', '1.5', '1e3', 'abc', '0x10', '99999999999999999', '12\n', '\u0000', 'Life-1', 'life1-0', 'life1-', '-life1-3', `${'a'.repeat(33)}-1`])(
    'rejects %j',
    (raw) => {
      expect(parseEventId(raw)).toBeNull();
    },
  );
});

describe('selectResume', () => {
  const log = { epoch: 'life1', oldestSeq: 10, latestSeq: 20 };

  it('without an id, only live elements', () => {
    expect(selectResume(undefined, log)).toEqual({ kind: 'live' });
  });

  it('replays what follows the last seen id, including at both edges of retention', () => {
    expect(selectResume(id(15), log)).toEqual({ kind: 'replay', fromSeq: 16 });
    expect(selectResume(id(9), log)).toEqual({ kind: 'replay', fromSeq: 10 });
    expect(selectResume(id(20), log)).toEqual({ kind: 'replay', fromSeq: 21 });
  });

  it('reports a gap when elements after the id have expired', () => {
    expect(selectResume(id(8), log)).toEqual({ kind: 'gap', requestedId: 'life1-8', fromSeq: 10, reason: 'expired' });
  });

  it('reports an unknown id (newer than anything durable)', () => {
    expect(selectResume(id(21), log)).toEqual({ kind: 'gap', requestedId: 'life1-21', fromSeq: 10, reason: 'unknown' });
  });

  it('reports an id of another life of the log, even one whose number is retained here', () => {
    expect(selectResume(id(15, 'life0'), log)).toEqual({ kind: 'gap', requestedId: 'life0-15', fromSeq: 10, reason: 'epoch' });
    expect(selectResume(bareId(15), log)).toEqual({ kind: 'gap', requestedId: '15', fromSeq: 10, reason: 'epoch' });
  });

  it('handles an empty log', () => {
    const empty = { epoch: 'life1', oldestSeq: undefined, latestSeq: 0 };
    expect(selectResume(id(5), empty)).toEqual({ kind: 'gap', requestedId: 'life1-5', fromSeq: 1, reason: 'unknown' });
  });

  it('the gap payload and header name the requested id, where delivery resumes and why', () => {
    expect(JSON.parse(gapData('life0-3', 'life1', 10, 'epoch'))).toEqual({ requestedId: 'life0-3', oldestRetained: 'life1-10', reason: 'epoch' });
    expect(streamGapHeader('life1-3', 'life1', 10, 'expired')).toBe('expired; requested=life1-3; oldest=life1-10');
  });
});
