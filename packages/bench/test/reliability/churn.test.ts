import { expect, it } from 'vitest';
import { churnScenario, churnShort } from '../../src/reliability/scenarios/churn.js';
import { failedChecks, SCENARIO_TIMEOUT_MS } from './failed-checks.js';

it('churn: subscribers cut every few seconds three ways resume with 0 missing, 0 duplicate', { timeout: SCENARIO_TIMEOUT_MS }, async () => {
  const result = await churnScenario(churnShort);
  expect(failedChecks(result)).toEqual([]);
  expect(result.figures.cuts).toBeGreaterThan(churnShort.subscribers);
});
