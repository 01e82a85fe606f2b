import type { Clock } from '../clock-and-logger.js';

/** A clock and the controls a test moves it with. */
export interface ManualClock {
  /** What a source (or a monitor) is given: time as `now()` says, timers that fire as the test advances. */
  readonly clock: Clock;
  /** Fires every timer due until `ms`, in order, and leaves the clock at `ms`. */
  advanceTo(ms: number): void;
  /** `advanceTo(now() + ms)`. */
  advanceBy(ms: number): void;
  /** Time passes without timers firing, as while the event loop is blocked. */
  block(ms: number): void;
  /** Timers set and not yet fired or cleared. */
  pending(): number;
  now(): number;
}

/** A clock whose timers fire only when the test advances time: sources are tested without sleeping. */
export function manualClock(startMs = 1_000_000): ManualClock {
  let now = startMs;
  const timers: Array<{ at: number; callback: () => void; cancelled: boolean }> = [];
  const clock: Clock = {
    now: () => now,
    setTimeout: (callback, delayMs) => {
      const timer = { at: now + delayMs, callback, cancelled: false };
      timers.push(timer);
      return timer;
    },
    clearTimeout: (handle) => {
      (handle as { cancelled: boolean }).cancelled = true;
    },
  };
  const advanceTo = (ms: number) => {
    for (;;) {
      const next = timers.filter((t) => !t.cancelled && t.at <= ms).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      next.cancelled = true;
      now = next.at;
      next.callback();
    }
    now = ms;
  };
  return {
    clock,
    advanceTo,
    advanceBy: (ms) => advanceTo(now + ms),
    block: (ms) => {
      now += ms;
    },
    pending: () => timers.filter((t) => !t.cancelled).length,
    now: () => now,
  };
}
