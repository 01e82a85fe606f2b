/**
 * The two things every layer may be handed from outside, in one shape each: time with its timers,
 * and a logger. A leaf like `errors.ts`: it imports nothing, and any layer may import it.
 */

/** Time and timers: `realClock` (or `monotonicClock`), or a manual clock in tests (`test/support/manual-clock.ts`). */
export interface Clock {
  /** Milliseconds. */
  now(): number;
  /** Schedules `callback`; the timer must not keep the process alive. */
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

const unrefTimers: Pick<Clock, 'setTimeout' | 'clearTimeout'> = {
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** The wall clock (`Date.now()`), with real timers that do not keep the process alive. */
export const realClock: Clock = { now: () => Date.now(), ...unrefTimers };

/** A clock for durations only (`performance.now()`: never jumps with the wall clock), with the same timers. */
export const monotonicClock: Clock = { now: () => performance.now(), ...unrefTimers };

/** The part of a pino logger the layers use (Fastify's logger satisfies it). */
export interface Logger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}
