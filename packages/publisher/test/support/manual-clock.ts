import type { Clock } from '../../src/clock-and-logger.js';

/** A clock whose timers fire only when the test advances time: sources are tested without sleeping. */
export function manualClock(startMs = 1_000_000) {
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
  /** Fires every timer due until `ms`, in order, and leaves the clock at `ms`. */
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
  const advanceBy = (ms: number) => advanceTo(now + ms);
  /** Time passes without timers firing, as while the event loop is blocked. */
  const block = (ms: number) => {
    now += ms;
  };
  const pending = () => timers.filter((t) => !t.cancelled).length;
  return { clock, advanceTo, advanceBy, block, pending, now: () => now };
}
