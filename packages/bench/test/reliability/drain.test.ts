import { expect, it } from 'vitest';
import { drainScenario, drainShort } from '../../src/reliability/scenarios/drain.js';
import { failedChecks, SCENARIO_TIMEOUT_MS } from './failed-checks.js';

it('drain: SIGTERM exits in time, reconnections spread over the jitter window, nothing lost', { timeout: SCENARIO_TIMEOUT_MS }, async () => {
  const result = await drainScenario(drainShort);
  expect(failedChecks(result)).toEqual([]);
});
