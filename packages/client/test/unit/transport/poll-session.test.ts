import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PollHints } from '../../../src/transport/poll-schedule.js';
import { NOT_HOLDING_AFTER, PollSession, type PollStrategy } from '../../../src/transport/poll-session.js';
import { emptyStats } from '../../../src/transport/transport-stats.js';

function session(strategy: PollStrategy, hints?: PollHints, hold = false) {
  const stats = emptyStats();
  const poll = new PollSession({
    format: 'turtle',
    strategy,
    ...(hints ? { hints } : {}),
    pollIntervalMs: 500,
    jitterMs: 0,
    minPollIntervalMs: 100,
    hold,
    backoff: { initialDelayMs: 1_000, maxDelayMs: 30_000, random: () => 1 },
    stats,
  });
  return { poll, stats };
}

const answer = (etag: string, cacheControl = 'max-age=0') => ({ etag, 'cache-control': cacheControl, date: new Date().toUTCString() });

describe('PollSession', () => {
  it('revalidates with the ETag it holds and hands each element over once', () => {
    const { poll, stats } = session('fixed');
    expect(poll.requesting()).toEqual({ accept: 'text/turtle' });
    expect(poll.answered(200, answer('"e1"'))).toEqual({ kind: 'element' });
    expect(poll.requesting()).toMatchObject({ accept: 'text/turtle', 'if-none-match': '"e1"' });
    expect(poll.answered(304, answer('"e1"'))).toEqual({ kind: 'unchanged' });
    expect(poll.answered(200, answer('"e1"'))).toEqual({ kind: 'unchanged' });
    expect(poll.answered(200, answer('"e2"'))).toEqual({ kind: 'element' });
    expect(stats).toEqual({ requests: 2, notModified: 1, elements: 2, reconnects: 0 });
  });

  it('revalidates with If-None-Match alone when it has an ETag (a server ignores If-Modified-Since then), else with If-Modified-Since', () => {
    const lastModified = new Date(Date.now() - 60_000).toUTCString();
    const withEtag = session('fixed').poll;
    withEtag.answered(200, { ...answer('"e1"'), 'last-modified': lastModified });
    expect(withEtag.requesting()).toEqual({ accept: 'text/turtle', 'if-none-match': '"e1"' });
    withEtag.answered(304, { ...answer('"e1"'), 'last-modified': lastModified });
    expect(withEtag.requesting()).toEqual({ accept: 'text/turtle', 'if-none-match': '"e1"' });
    const withoutEtag = session('fixed').poll;
    withoutEtag.answered(200, { 'cache-control': 'max-age=0', 'last-modified': lastModified });
    expect(withoutEtag.requesting()).toEqual({ accept: 'text/turtle', 'if-modified-since': lastModified });
  });

  it('fixed: waits the interval, and skips requests while the cached answer is fresh', () => {
    const { poll } = session('fixed');
    poll.answered(200, answer('"e1"', 'max-age=5'));
    expect(poll.nextDelay(Date.now())).toBe(500);
    expect(poll.fresh).toBe(true);
    poll.answered(200, answer('"e2"', 'max-age=0'));
    expect(poll.fresh).toBe(false);
  });

  describe('on a set clock', () => {
    const now = Date.UTC(2026, 10, 25, 12);
    beforeEach(() => {
      vi.useFakeTimers({ now, toFake: ['Date'] });
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it('smart: asks when the next element is due, to be held until it is served; a late one is asked for again at once, held, each time a wait runs out', () => {
      const hints: PollHints = { generatedAtMs: now - 300, expectedIntervalMs: 1_000, clockOffsetMs: 0 };
      const { poll } = session('smart', hints);
      poll.answered(200, answer('"e1"'));
      expect(poll.nextDelay(now)).toBe(700);
      vi.setSystemTime(now + 700);
      expect(poll.requesting()).toMatchObject({ 'if-none-match': '"e1"', prefer: 'wait=1' });
      // Held for its whole wait, and still nothing: asked again at once, held again.
      vi.setSystemTime(now + 1_700);
      poll.answered(304, answer('"e1"'));
      expect(poll.nextDelay(now + 1_700)).toBe(0);
      expect(poll.requesting()).toMatchObject({ prefer: 'wait=1' });
      vi.setSystemTime(now + 2_700);
      poll.answered(304, answer('"e1"'));
      expect(poll.nextDelay(now + 2_700)).toBe(0);
      expect(poll.publisherHolds).toBe(true);
    });

    it(`smart: a publisher (or a cache in front of it) that answers held requests at once is polled unheld after ${NOT_HOLDING_AFTER} such answers, backing off while the element is late`, () => {
      const hints: PollHints = { generatedAtMs: now - 300, expectedIntervalMs: 1_000, clockOffsetMs: 0 };
      const { poll } = session('smart', hints);
      poll.answered(200, answer('"e1"'));
      vi.setSystemTime(now + 700);
      expect(poll.requesting()).toMatchObject({ prefer: 'wait=1' });
      // Answered at once, not held: once is not enough to say the publisher does not hold.
      poll.answered(304, answer('"e1"'));
      expect(poll.publisherHolds).toBe(true);
      expect(poll.nextDelay(now + 700)).toBe(0);
      expect(poll.requesting()).toMatchObject({ prefer: 'wait=1' });
      poll.answered(304, answer('"e1"'));
      expect(poll.publisherHolds).toBe(false);
      expect(poll.nextDelay(now + 700)).toBe(200);
      expect(poll.requesting()).not.toHaveProperty('prefer');
      poll.answered(304, answer('"e1"'));
      expect(poll.nextDelay(now + 900)).toBe(250);
      poll.answered(200, answer('"e2"'));
      expect(poll.requesting()).not.toHaveProperty('prefer');
    });

    it('smart and holding: a publisher that answers held requests at once turns holding off: asked after the due moment from then on', () => {
      const hints: PollHints = { generatedAtMs: now, expectedIntervalMs: 5_000, clockOffsetMs: 0 };
      const { poll } = session('smart', hints, true);
      poll.answered(200, answer('"e1"'));
      for (let answeredAtOnce = 1; answeredAtOnce <= NOT_HOLDING_AFTER; answeredAtOnce++) {
        expect(poll.requesting()).toMatchObject({ prefer: 'wait=2' });
        poll.answered(304, answer('"e1"'));
      }
      expect(poll.publisherHolds).toBe(false);
      expect(poll.holdMs).toBe(0);
      poll.answered(200, answer('"e2"'));
      hints.generatedAtMs = now;
      // Unheld: at the due moment (plus the learnt margin), not before it.
      expect(poll.nextDelay(now)).toBeGreaterThanOrEqual(5_000);
      expect(poll.requesting()).not.toHaveProperty('prefer');
    });
  });

  it('smart and holding: asks to be held once it knows when the next element is due, never for an irregular stream', () => {
    const hints: PollHints = { expectedIntervalMs: 5_000, clockOffsetMs: 0 };
    const { poll } = session('smart', hints, true);
    expect(poll.requesting()).toEqual({ accept: 'text/turtle' });
    poll.answered(200, answer('"e1"'));
    expect(poll.holdMs).toBe(0);
    hints.generatedAtMs = Date.now();
    expect(poll.holdMs).toBe(2_000);
    expect(poll.requesting()).toMatchObject({ 'if-none-match': '"e1"', prefer: 'wait=2' });
    expect(session('fixed', hints, true).poll.holdMs).toBe(0);
    const irregular = session('smart', { expectedIntervalMs: null, generatedAtMs: Date.now() }, true).poll;
    irregular.answered(200, answer('"e1"'));
    expect(irregular.requesting()).not.toHaveProperty('prefer');
  });

  it('smart: asks to be held a quarter interval with every request once it knows when elements are due, and learns how late elements come; never for an irregular stream', () => {
    const hints: PollHints = { expectedIntervalMs: 5_000, clockOffsetMs: 0 };
    const { poll } = session('smart', hints, false);
    poll.answered(200, answer('"e1"'));
    expect(poll.holdMs).toBe(0);
    hints.generatedAtMs = Date.now() - 5_000;
    expect(poll.holdMs).toBe(2_000);
    expect(poll.requesting()).toMatchObject({ 'if-none-match': '"e1"', prefer: 'wait=2' });
    poll.answered(200, answer('"e2"'));
    expect(poll.holdMs).toBe(2_000);
    // e2 came just now, about when it was due: the next request goes out at the next due moment.
    const e2At = Date.now();
    hints.generatedAtMs = e2At;
    expect(poll.nextDelay(e2At)).toBeGreaterThanOrEqual(5_000);
    const irregular = session('smart', { expectedIntervalMs: null, generatedAtMs: Date.now() }).poll;
    irregular.answered(200, answer('"e1"'));
    irregular.answered(304, answer('"e1"'));
    expect(irregular.holdMs).toBe(0);
    expect(irregular.requesting()).not.toHaveProperty('prefer');
  });

  it('smart without hints: follows the cached answer’s freshness, never sooner than minPollIntervalMs', () => {
    const { poll } = session('smart');
    poll.answered(200, answer('"e1"', 'max-age=3'));
    expect(poll.nextDelay(Date.now())).toBeGreaterThan(2_900);
    poll.answered(200, answer('"e2"', 'max-age=0'));
    expect(poll.nextDelay(Date.now())).toBe(100);
    expect(poll.fresh).toBe(false);
  });

  it('retries server trouble after Retry-After or backoff, and refuses 4xx for good', () => {
    const { poll, stats } = session('fixed');
    const trouble = poll.answered(503, { 'retry-after': '2' });
    expect(trouble).toEqual({ kind: 'retry', reason: 'HTTP 503', retryAfterMs: 2_000 });
    expect(poll.failed(2_000)).toBe(2_000);
    expect(poll.failed()).toBe(1_000);
    expect(poll.failed()).toBe(2_000);
    poll.answered(200, answer('"e1"'));
    expect(poll.failed()).toBe(1_000);
    expect(poll.answered(404, {})).toEqual({ kind: 'refused' });
    expect(stats.reconnects).toBe(4);
  });
});
