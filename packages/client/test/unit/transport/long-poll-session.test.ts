import { describe, expect, it } from 'vitest';
import { LongPollSession } from '../../../src/transport/long-poll-session.js';
import { emptyStats } from '../../../src/transport/transport-stats.js';

describe('LongPollSession', () => {
  const session = () => {
    const stats = emptyStats();
    return { long: new LongPollSession({ format: 'ntriples', waitSeconds: 20, backoff: { initialDelayMs: 500, maxDelayMs: 5_000, random: () => 1 }, stats }), stats };
  };

  it('asks plainly first, then to wait for what follows the element it holds', () => {
    const { long, stats } = session();
    expect(long.requesting()).toEqual({ accept: 'application/n-triples' });
    expect(long.answered(200, { etag: '"e1"' })).toEqual({ kind: 'element' });
    expect(long.requesting()).toEqual({ accept: 'application/n-triples', 'if-none-match': '"e1"', prefer: 'wait=20' });
    expect(long.answered(304, {})).toEqual({ kind: 'unchanged' });
    expect(long.answered(200, { etag: '"e1"' })).toEqual({ kind: 'unchanged' });
    expect(long.answered(200, { etag: '"e2"' })).toEqual({ kind: 'element' });
    expect(long.holdMs).toBe(20_000);
    expect(stats).toEqual({ requests: 2, notModified: 1, elements: 2, reconnects: 0 });
  });

  it('backs off after failures, from zero again after an answer, and refuses 4xx for good', () => {
    const { long } = session();
    expect(long.answered(502, {})).toEqual({ kind: 'retry', reason: 'HTTP 502', retryAfterMs: undefined });
    expect(long.failed()).toBe(500);
    expect(long.failed()).toBe(1_000);
    long.answered(304, {});
    expect(long.failed()).toBe(500);
    expect(long.answered(410, {})).toEqual({ kind: 'refused' });
  });
});
