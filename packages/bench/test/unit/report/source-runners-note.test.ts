import { describe, expect, it } from 'vitest';
import { sourceRunnersNote } from '../../../src/report/write-results.js';

describe('sourceRunnersNote', () => {
  const run = { mode: 'sse', clients: 300, serverInstances: 2, durationSeconds: 8, intervalSeconds: 2 } as const;

  it('flags instances that each ran the source: twice the elements the interval gives', () => {
    expect(sourceRunnersNote({ ...run, updatesPublished: 8 })).toBe(
      '(!) sse, 300 clients: 8 elements in 8 s at one per 2 s: more than one of the 2 instances ran the stream\'s source.',
    );
  });

  it('says nothing of a run with the elements its interval gives, or of one instance', () => {
    expect(sourceRunnersNote({ ...run, updatesPublished: 5 })).toBeUndefined();
    expect(sourceRunnersNote({ ...run, serverInstances: 1, updatesPublished: 10 })).toBeUndefined();
  });
});
