import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { adaptMargin, holdLeadMs, holdSeconds, holdSpreadMs, lateHoldSeconds, smartPollDelay } from '../../../src/transport/poll-schedule.js';

const options = { jitterMs: 200, minPollIntervalMs: 100 };
const noJitter = () => 0;
const fullJitter = () => 1;
const T = 1_700_000_000_000;

describe('smartPollDelay', () => {
  const regular = { generatedAtMs: T, expectedIntervalMs: 5_000, clockOffsetMs: 0 };

  it('waits until the next element is due, plus jitter', () => {
    expect(smartPollDelay(regular, { nowMs: T + 300, lateAttempts: 0, freshForMs: 4_000, marginMs: 0 }, options, noJitter)).toBe(4_700);
    expect(smartPollDelay(regular, { nowMs: T + 300, lateAttempts: 0, freshForMs: 4_000, marginMs: 0 }, options, fullJitter)).toBe(4_900);
  });

  it('asks the learnt margin after the due moment', () => {
    expect(smartPollDelay(regular, { nowMs: T + 300, lateAttempts: 0, freshForMs: 0, marginMs: 40 }, options, noJitter)).toBe(4_740);
  });

  it('moves the due moment onto the client clock', () => {
    // The server's clock is 1 s ahead of ours: its element due at T + 5 s is due at T + 4 s here.
    expect(smartPollDelay({ ...regular, clockOffsetMs: 1_000 }, { nowMs: T + 300, lateAttempts: 0, freshForMs: 0, marginMs: 0 }, options, noJitter)).toBe(3_700);
  });

  it('asks again at once after the first request that found nothing (to be held), then backs off from minPollIntervalMs, doubling, at most a quarter of the interval', () => {
    const late = (lateAttempts: number) => smartPollDelay(regular, { nowMs: T + 5_050, lateAttempts, freshForMs: 0, marginMs: 0 }, options, noJitter);
    expect([1, 2, 3, 4, 5, 6, 7].map(late)).toEqual([0, 100, 200, 400, 800, 1_250, 1_250]);
  });

  it('asks again at once after each held request whose wait ran out, holding ahead or not: the wait paces the requests', () => {
    const late = { nowMs: T + 7_000, freshForMs: 0, marginMs: 0, waitRanOut: true };
    for (const lateAttempts of [1, 2, 5]) {
      expect(smartPollDelay(regular, { ...late, lateAttempts }, options, fullJitter)).toBe(0);
      expect(smartPollDelay(regular, { ...late, lateAttempts }, { ...options, hold: true }, fullJitter)).toBe(0);
    }
  });

  it('from a publisher that does not hold, backs off from the first miss: minPollIntervalMs, doubling, at most a quarter of the interval', () => {
    const late = (lateAttempts: number) =>
      smartPollDelay(regular, { nowMs: T + 5_050, lateAttempts, freshForMs: 0, marginMs: 0, publisherHolds: false, waitRanOut: false }, options, noJitter);
    expect([1, 2, 3, 4, 5, 6].map(late)).toEqual([100, 200, 400, 800, 1_250, 1_250]);
  });

  it('asks soon when the next element is due already (the newest came late)', () => {
    expect(smartPollDelay(regular, { nowMs: T + 6_000, lateAttempts: 0, freshForMs: 0, marginMs: 0 }, options, noJitter)).toBe(100);
  });

  it('holding, asks within the jitter before the element is due, 100 ms ahead of it (the publisher holds the request), and backs off as without', () => {
    const holding = { ...options, hold: true };
    const moment = { nowMs: T + 300, lateAttempts: 0, freshForMs: 0, marginMs: 0 };
    expect(smartPollDelay(regular, moment, holding, noJitter)).toBe(4_700 - 100);
    expect(smartPollDelay(regular, moment, holding, fullJitter)).toBe(4_700 - 100 - 200);
    expect(smartPollDelay(regular, { ...moment, marginMs: 40 }, holding, fullJitter)).toBe(4_700 - 100 - 200 + 40);
    // Inside the spread already: at once.
    expect(smartPollDelay(regular, { ...moment, nowMs: T + 4_800 }, holding, fullJitter)).toBe(0);
    expect(smartPollDelay(regular, { ...moment, nowMs: T + 4_950 }, holding, noJitter)).toBe(0);
    expect(smartPollDelay(regular, { ...moment, nowMs: T + 5_050, lateAttempts: 2 }, holding, noJitter)).toBe(200);
  });

  it('spreads held requests over the jitter (at most a quarter interval), ending 100 ms (at most an eighth interval) before the due moment, and asks to be held past it by a quarter interval', () => {
    expect(holdSpreadMs(5_000, 250)).toBe(250);
    expect(holdSpreadMs(600_000, 250)).toBe(250);
    expect(holdSpreadMs(400, 250)).toBe(100);
    expect(holdLeadMs(5_000)).toBe(100);
    expect(holdLeadMs(400)).toBe(50);
    expect(holdSeconds(5_000, 250)).toBe(2);
    expect(holdSeconds(1_000, 250)).toBe(1);
    expect(holdSeconds(60_000, 250)).toBe(16);
  });

  it('falls back to the cached answer’s freshness for an irregular stream or before the first element', () => {
    const moment = { nowMs: T, lateAttempts: 0, freshForMs: 3_000, marginMs: 0 };
    expect(smartPollDelay({ expectedIntervalMs: null, generatedAtMs: T }, moment, options, noJitter)).toBe(3_000);
    expect(smartPollDelay({ expectedIntervalMs: 5_000 }, moment, options, noJitter)).toBe(3_000);
    expect(smartPollDelay({}, { ...moment, freshForMs: 0 }, options, fullJitter)).toBe(300);
  });
});

describe('lateHoldSeconds', () => {
  it('asks to be held a quarter interval, in whole seconds, at least one', () => {
    expect(lateHoldSeconds(5_000)).toBe(2);
    expect(lateHoldSeconds(250)).toBe(1);
    expect(lateHoldSeconds(60_000)).toBe(15);
  });
});

describe('smartPollDelay, for any stream, clock and moment', () => {
  const intervalMs = fc.integer({ min: 1, max: 3_600_000 });
  const schedule = fc.record({
    generatedAtMs: fc.integer({ min: 0, max: 2_000_000_000_000 }),
    expectedIntervalMs: intervalMs,
    clockOffsetMs: fc.integer({ min: -60_000, max: 60_000 }),
    sinceGeneratedMs: fc.integer({ min: -60_000, max: 7_200_000 }),
    marginMs: fc.integer({ min: 0, max: 900_000 }),
    jitterMs: fc.integer({ min: 0, max: 5_000 }),
    minPollIntervalMs: fc.integer({ min: 1, max: 10_000 }),
    draw: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
  });

  it('a poller that does not hold ahead never asks for an element on time before it is due, nor later than the jitter after', () => {
    fc.assert(
      fc.property(schedule, (s) => {
        const dueAtMs = s.generatedAtMs + s.expectedIntervalMs - s.clockOffsetMs + s.marginMs;
        const nowMs = s.generatedAtMs - s.clockOffsetMs + s.sinceGeneratedMs;
        fc.pre(dueAtMs > nowMs);
        const delay = smartPollDelay(s, { nowMs, lateAttempts: 0, freshForMs: 0, marginMs: s.marginMs }, s, () => s.draw);
        expect(nowMs + delay).toBeGreaterThanOrEqual(dueAtMs);
        expect(nowMs + delay).toBeLessThanOrEqual(dueAtMs + s.jitterMs);
      }),
    );
  });

  it('a holding poller asks within its spread, its lead before the due moment, never later, and the publisher holds it past it', () => {
    fc.assert(
      fc.property(schedule, (s) => {
        const dueAtMs = s.generatedAtMs + s.expectedIntervalMs - s.clockOffsetMs + s.marginMs;
        const nowMs = s.generatedAtMs - s.clockOffsetMs + s.sinceGeneratedMs;
        fc.pre(dueAtMs > nowMs);
        const delay = smartPollDelay(s, { nowMs, lateAttempts: 0, freshForMs: 0, marginMs: s.marginMs }, { ...s, hold: true }, () => s.draw);
        const leadMs = holdLeadMs(s.expectedIntervalMs);
        const spreadMs = holdSpreadMs(s.expectedIntervalMs, s.jitterMs);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(nowMs + delay).toBeLessThanOrEqual(Math.max(nowMs, dueAtMs - leadMs));
        expect(nowMs + delay).toBeGreaterThanOrEqual(Math.min(nowMs, dueAtMs - leadMs - spreadMs));
        // Asked at the start of its spread, a request is still held when the element is due (and a quarter interval later).
        expect(holdSeconds(s.expectedIntervalMs, s.jitterMs) * 1000).toBeGreaterThanOrEqual(leadMs + spreadMs + s.expectedIntervalMs / 4);
      }),
    );
  });

  it('a late element is asked for again at once only after the first miss (then held), else within minPollIntervalMs and a quarter interval, plus the jitter', () => {
    fc.assert(
      fc.property(schedule, fc.integer({ min: 1, max: 64 }), fc.boolean(), (s, lateAttempts, hold) => {
        const nowMs = s.generatedAtMs - s.clockOffsetMs + s.sinceGeneratedMs;
        const delay = smartPollDelay(s, { nowMs, lateAttempts, freshForMs: 0, marginMs: s.marginMs }, { ...s, hold }, () => s.draw);
        if (!hold && lateAttempts === 1) {
          expect(delay).toBe(0);
          return;
        }
        // A held request that ended without the element, or a publisher that does not hold: never a request loop.
        expect(delay).toBeGreaterThanOrEqual(s.minPollIntervalMs);
        expect(delay).toBeLessThanOrEqual(Math.max(s.minPollIntervalMs, s.expectedIntervalMs / 4) + s.jitterMs + 1);
      }),
    );
  });

  it('the wait a poller asks for covers a quarter interval, in whole seconds', () => {
    fc.assert(
      fc.property(intervalMs, (expectedIntervalMs) => {
        const seconds = lateHoldSeconds(expectedIntervalMs);
        expect(Number.isInteger(seconds) && seconds >= 1).toBe(true);
        expect(seconds * 1000).toBeGreaterThanOrEqual(expectedIntervalMs / 4);
      }),
    );
  });
});

describe('adaptMargin', () => {
  it('doubles the margin after an element that was not there at its due moment (at least 20 ms, at most a quarter interval)', () => {
    expect(adaptMargin(0, 1, 5_000)).toBe(20);
    expect(adaptMargin(20, 2, 5_000)).toBe(40);
    expect(adaptMargin(1_000, 1, 5_000)).toBe(1_250);
    expect(adaptMargin(0, 1, null)).toBe(20);
  });

  it('after a miss, doubles to no more than 1.5 × how long after its due moment the element came', () => {
    expect(adaptMargin(100, 1, 5_000, 180)).toBe(200);
    expect(adaptMargin(100, 1, 5_000, 120)).toBe(180);
    expect(adaptMargin(0, 1, 5_000, 5)).toBe(20);
    // One element very late moves the margin by one doubling, not to its lateness.
    expect(adaptMargin(40, 1, 5_000, 900)).toBe(80);
    expect(adaptMargin(1_000, 2, 5_000, 4_000)).toBe(1_250);
  });

  it('shrinks it slowly after each element found at the first request', () => {
    expect(adaptMargin(100, 0, 5_000)).toBeCloseTo(95, 6);
    // Misses stay rare: from 40 ms, fourteen hits in a row before the margin is back under 20 ms.
    let margin = 40;
    let hits = 0;
    while (margin >= 20) {
      margin = adaptMargin(margin, 0, 5_000);
      hits++;
    }
    expect(hits).toBe(14);
  });
});
