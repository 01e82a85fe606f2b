import { defineConfig } from 'vitest/config';

/**
 * Four projects, which `pnpm test` runs in three steps: `unit` and `integration` together, then
 * `packaging` one file at a time (it builds and installs the packages), then `reliability` (the
 * bench's failure scenarios, two at a time).
 */
export default defineConfig({
  test: {
    // Integration tests open real sockets and start real processes: keep them from starving each other.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for something that happens in milliseconds (a connection counted, a process
    // noticing a signal); its default of 1 s is too short when CI runs the suite on a busy machine.
    // The timeout only bounds how long a failing test waits.
    expect: { poll: { timeout: 10_000 } },
    reporters: ['default'],
    projects: [
      {
        // Unit tests share one module graph per worker, where each file would import the same
        // modules again (16 of the 38 s these files took): none of them stubs globals or mocks
        // modules, and those that fake timers or spy restore them after each test.
        extends: true,
        test: { name: 'unit', include: ['packages/*/test/unit/**/*.test.ts'], isolate: false },
      },
      {
        // A fresh module graph per file: these start servers and processes and listen on `process`.
        extends: true,
        test: {
          name: 'integration',
          include: ['packages/*/test/**/*.test.ts'],
          exclude: ['packages/*/test/unit/**', 'packages/publisher/test/packaging/**', 'packages/bench/test/reliability/**'],
        },
      },
      { extends: true, test: { name: 'packaging', include: ['packages/publisher/test/packaging/**/*.test.ts'] } },
      { extends: true, test: { name: 'reliability', include: ['packages/bench/test/reliability/**/*.test.ts'] } },
    ],
  },
});
