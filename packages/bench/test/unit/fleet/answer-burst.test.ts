import { afterEach, describe, expect, it, vi } from 'vitest';
import { AnswerBurst, BURST_QUIET_MS, FleetBurstBarrier, type FleetBurstGate, MAX_BURST_WAIT_MS } from '../../../src/fleet/answer-burst.js';

/** Whether `promise` has settled once the microtasks queued now have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  for (let turn = 0; turn < 5; turn++) await Promise.resolve();
  return done;
}

/** A burst of `inFlight` requests sent, one of them answered: its client waits for the rest. */
function burstWith(inFlight: number, burst = new AnswerBurst()): AnswerBurst {
  for (let index = 0; index < inFlight; index++) burst.sent();
  burst.answered();
  return burst;
}

describe('AnswerBurst', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('has named limits: 500 ms at most after the first request waited, 50 ms without an answer', () => {
    expect(MAX_BURST_WAIT_MS).toBe(500);
    expect(BURST_QUIET_MS).toBe(50);
  });

  it('lets requests go at the next turn of the event loop when none is in flight, in the order they waited', async () => {
    const burst = burstWith(1);
    expect(burst.inFlight).toBe(0);
    const order: string[] = [];
    const first = burst.ended().then(() => order.push('first'));
    const second = burst.ended().then(() => order.push('second'));
    await Promise.resolve();
    expect(order).toEqual([]);
    await Promise.all([first, second]);
    expect(order).toEqual(['first', 'second']);
  });

  it('holds them while requests of the burst are in flight, and lets them go with the last answer', async () => {
    vi.useFakeTimers();
    const burst = burstWith(4);
    const ended = burst.ended();
    // Answers keep coming (well within the quiet time): the burst goes on.
    for (let answer = 0; answer < 2; answer++) {
      await vi.advanceTimersByTimeAsync(BURST_QUIET_MS - 1);
      burst.answered();
      expect(await settled(ended)).toBe(false);
    }
    expect(burst.inFlight).toBe(1);
    burst.answered();
    expect(burst.inFlight).toBe(0);
    // At the next turn, not after a quiet time.
    await vi.advanceTimersByTimeAsync(0);
    expect(await settled(ended)).toBe(true);
  });

  it(`lets them go after ${BURST_QUIET_MS} ms without an answer, though requests are still in flight (held for a later element)`, async () => {
    vi.useFakeTimers();
    const burst = burstWith(3);
    const ended = burst.ended();
    burst.answered();
    await vi.advanceTimersByTimeAsync(BURST_QUIET_MS - 1);
    expect(await settled(ended)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(ended)).toBe(true);
    expect(burst.inFlight).toBe(1);
  });

  it(`lets them go ${MAX_BURST_WAIT_MS} ms after the first waited (the limit), though answers keep coming`, async () => {
    vi.useFakeTimers();
    const burst = burstWith(1_000);
    const ended = burst.ended();
    let elapsedMs = 0;
    while (elapsedMs < MAX_BURST_WAIT_MS - 10) {
      await vi.advanceTimersByTimeAsync(10);
      elapsedMs += 10;
      burst.answered();
      expect(await settled(ended)).toBe(false);
    }
    await vi.advanceTimersByTimeAsync(MAX_BURST_WAIT_MS - elapsedMs);
    expect(await settled(ended)).toBe(true);
    expect(burst.inFlight).toBeGreaterThan(0);
  });

  it('counts no request below zero: an answer told twice does not hide one in flight', async () => {
    const burst = new AnswerBurst();
    burst.answered();
    burst.answered();
    expect(burst.inFlight).toBe(0);
    burst.sent();
    expect(burst.inFlight).toBe(1);
  });

  it('starts each burst afresh: a request after the last burst waits for its own', async () => {
    vi.useFakeTimers();
    const burst = burstWith(1);
    const first = burst.ended();
    await vi.advanceTimersByTimeAsync(0);
    expect(await settled(first)).toBe(true);
    burstWith(2, burst);
    const second = burst.ended();
    await vi.advanceTimersByTimeAsync(BURST_QUIET_MS - 1);
    expect(await settled(second)).toBe(false);
    burst.answered();
    await vi.advanceTimersByTimeAsync(0);
    expect(await settled(second)).toBe(true);
  });

  describe("with a gate (the fleet's other workers)", () => {
    /** A gate that records what it is told. */
    const recordingGate = () => {
      const told: string[] = [];
      const gate: FleetBurstGate = { over: () => told.push('over'), withdrawn: () => told.push('withdrawn') };
      return { told, gate };
    };

    it("tells the gate once that its burst is over, and lets its requests go when the fleet's is", async () => {
      vi.useFakeTimers();
      const { told, gate } = recordingGate();
      const burst = burstWith(2, new AnswerBurst({ gate }));
      const ended = burst.ended();
      burst.answered();
      await vi.advanceTimersByTimeAsync(100);
      expect(told).toEqual(['over']);
      expect(await settled(ended)).toBe(false);
      burst.fleetOver();
      expect(await settled(ended)).toBe(true);
      expect(told).toEqual(['over']);
    });

    it('tells it that a burst said over goes on when an answer comes with requests in flight, and over again after', async () => {
      vi.useFakeTimers();
      const { told, gate } = recordingGate();
      const burst = burstWith(3, new AnswerBurst({ gate }));
      const ended = burst.ended();
      // Quiet for BURST_QUIET_MS: over, though two requests are in flight.
      await vi.advanceTimersByTimeAsync(BURST_QUIET_MS);
      expect(told).toEqual(['over']);
      burst.answered();
      expect(told).toEqual(['over', 'withdrawn']);
      // The fleet's "go" meant for the burst said over is not this one's.
      burst.fleetOver();
      expect(await settled(ended)).toBe(false);
      burst.answered();
      await vi.advanceTimersByTimeAsync(0);
      expect(told).toEqual(['over', 'withdrawn', 'over']);
      burst.fleetOver();
      expect(await settled(ended)).toBe(true);
    });

    it(`lets its requests go ${MAX_BURST_WAIT_MS} ms after the first waited though the fleet never says its burst is over`, async () => {
      vi.useFakeTimers();
      const { told, gate } = recordingGate();
      const burst = burstWith(1, new AnswerBurst({ gate }));
      const ended = burst.ended();
      await vi.advanceTimersByTimeAsync(MAX_BURST_WAIT_MS - 1);
      expect(told).toEqual(['over']);
      expect(await settled(ended)).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(await settled(ended)).toBe(true);
      // The others are not to wait for a burst whose requests went.
      expect(told).toEqual(['over', 'withdrawn']);
      // A "go" that comes late lets nothing go.
      const next = burstWith(2, burst).ended();
      burst.fleetOver();
      expect(await settled(next)).toBe(false);
    });
  });
});

describe('FleetBurstBarrier', () => {
  /** A worker that records what the barrier sends it. */
  const worker = () => {
    const received: string[] = [];
    return { received, send: (message: string) => received.push(message) };
  };

  it('tells every worker to go once all have said their burst is over, then starts afresh', () => {
    const workers = [worker(), worker()];
    const barrier = new FleetBurstBarrier(workers);
    barrier.over(workers[0]!);
    barrier.over(workers[0]!);
    expect(workers.map((each) => each.received)).toEqual([[], []]);
    barrier.over(workers[1]!);
    expect(workers.map((each) => each.received)).toEqual([['burst-go'], ['burst-go']]);
    barrier.over(workers[1]!);
    expect(workers[0]!.received).toHaveLength(1);
  });

  it('waits again for a worker whose burst, said over, went on', () => {
    const workers = [worker(), worker()];
    const barrier = new FleetBurstBarrier(workers);
    barrier.over(workers[0]!);
    barrier.withdrawn(workers[0]!);
    barrier.over(workers[1]!);
    expect(workers[1]!.received).toEqual([]);
    barrier.over(workers[0]!);
    expect(workers.map((each) => each.received)).toEqual([['burst-go'], ['burst-go']]);
  });
});
