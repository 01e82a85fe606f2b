import { describe, expect, it } from 'vitest';
import { AnswerBurst, MAX_BURST_WAIT_MS } from '../../../src/fleet/answer-burst.js';

/** Calls `burst.answered()` once a turn of the event loop (an answer read each turn) until `turns`, or until stopped. */
function feedAnswers(burst: AnswerBurst, turns = Number.POSITIVE_INFINITY) {
  const feed = { turns: 0, going: true, stop: () => (feed.going = false) };
  const next = () => {
    if (!feed.going) return;
    burst.answered();
    feed.turns++;
    if (feed.turns < turns) setImmediate(next);
    else feed.going = false;
  };
  next();
  return feed;
}

describe('AnswerBurst', () => {
  it('lets requests go after a turn of the event loop that read no answer, in the order they waited', async () => {
    const burst = new AnswerBurst();
    const order: string[] = [];
    const first = burst.ended().then(() => order.push('first'));
    const second = burst.ended().then(() => order.push('second'));
    // Not before a turn of the event loop has passed.
    await Promise.resolve();
    expect(order).toEqual([]);
    await Promise.all([first, second]);
    expect(order).toEqual(['first', 'second']);
  });

  it('holds requests while answers are read turn after turn, and lets them go once the answers stop', async () => {
    const burst = new AnswerBurst(60_000);
    const feed = feedAnswers(burst, 20);
    await burst.ended();
    expect(feed.going).toBe(false);
    expect(feed.turns).toBe(20);
  });

  it(`lets them go ${MAX_BURST_WAIT_MS} ms after the first waited (the limit) though answers keep coming`, async () => {
    expect(MAX_BURST_WAIT_MS).toBe(50);
    const burst = new AnswerBurst(MAX_BURST_WAIT_MS);
    const feed = feedAnswers(burst);
    const waitedAtMs = Date.now();
    await burst.ended();
    const waitedMs = Date.now() - waitedAtMs;
    expect(feed.going).toBe(true);
    feed.stop();
    expect(waitedMs).toBeGreaterThanOrEqual(MAX_BURST_WAIT_MS);
  });

  it('starts each burst afresh: a request after the last burst waits for its own', async () => {
    const burst = new AnswerBurst(60_000);
    await burst.ended();
    const feed = feedAnswers(burst, 5);
    await burst.ended();
    expect(feed.turns).toBe(5);
    expect(feed.going).toBe(false);
  });
});
