import { expect, it } from 'vitest';
import { stalledScenario, stalledShort } from '../../src/reliability/scenarios/stalled.js';
import { failedChecks, SCENARIO_TIMEOUT_MS } from './failed-checks.js';

it('stalled readers: each is evicted, healthy subscribers lose nothing, RSS stays bounded', { timeout: SCENARIO_TIMEOUT_MS }, async () => {
  const result = await stalledScenario(stalledShort);
  expect(failedChecks(result)).toEqual([]);
});
