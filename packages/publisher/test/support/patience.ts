/**
 * How long a `vi.waitFor` waits for what happens in milliseconds on a quiet machine (a subscriber
 * going live, a kernel queue filling): vitest's default of 1 s is too short on a busy CI machine.
 * The timeout only bounds how long a failing test waits.
 */
export const patience = { timeout: 10_000 };
