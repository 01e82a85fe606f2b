import { expect, it } from 'vitest';
import { crashScenario, crashShort } from '../../src/reliability/scenarios/crash.js';
import { failedChecks, SCENARIO_TIMEOUT_MS } from './failed-checks.js';

it('crash: kill -9 under ingest loses no acknowledged element, retries with their Idempotency-Key write nothing twice, and subscribers resume', { timeout: SCENARIO_TIMEOUT_MS }, async () => {
  const result = await crashScenario(crashShort);
  expect(failedChecks(result)).toEqual([]);
  expect(result.figures.acknowledged).toBeGreaterThan(0);
  expect([result.figures.duplicateElements, result.figures.replayMismatches]).toEqual([0, 0]);
});
