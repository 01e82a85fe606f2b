import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    // Integration tests open real sockets and start real processes: keep them from starving each other.
    pool: 'forks',
    maxWorkers: 2,
    // A worker runs its files one after another in the same process, importing each module once:
    // a fresh process per file spent a quarter of the suite's CPU importing the same modules again
    // (main suite on this 2-core machine: 468 s isolated, 353 s not). No test file may leave a
    // global changed (environment, timers, listeners): each restores what it changes.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
});
