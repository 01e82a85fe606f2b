/**
 * The reliability scenarios at their short (CI) sizes run against real publisher processes on
 * loopback, one file per scenario so that two run at once (`pnpm test` runs them after the other
 * tests). `pnpm test:reliability` runs them at full size (docs/reliability.md). Each must hold
 * entirely: a failing check is a bug, not a figure.
 */
import type { ScenarioResult } from '../../src/reliability/scenario-result.js';

/** How long one short scenario may take (ms): the longest, stalled readers, takes about a minute. */
export const SCENARIO_TIMEOUT_MS = 120_000;

/**
 * The checks that fail, but for bounds on time: those are enforced by the full run
 * (`pnpm test:reliability`), not by a test suite on a shared, noisy machine.
 */
export const failedChecks = (result: ScenarioResult) =>
  result.checks.filter((entry) => !entry.holds && !entry.timed).map((entry) => `${entry.what}: ${entry.observed}`);
