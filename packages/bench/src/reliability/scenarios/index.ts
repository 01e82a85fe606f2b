import type { ScenarioResult } from '../scenario-result.js';
import { churnDefaults, churnScenario, churnShort } from './churn.js';
import { crashDefaults, crashScenario, crashShort } from './crash.js';
import { drainDefaults, drainScenario, drainShort } from './drain.js';
import { fuzzScenario } from './fuzz.js';
import { overloadDefaults, overloadScenario, overloadShort } from './overload.js';
import { soakDefaults, soakScenario, soakShort } from './soak.js';
import { stalledDefaults, stalledScenario, stalledShort } from './stalled.js';

export interface ScenarioRun {
  readonly short: boolean;
  readonly soakMinutes: number;
}

/** Fuzz values per property: the suite's count in `pnpm test`, ten times that in a full run. */
const FUZZ_RUNS_FULL = 100_000;
const FUZZ_RUNS_SHORT = 10_000;

/** Every scenario, by name, at its full or short (CI) size. */
export const scenarios = {
  churn: ({ short }: ScenarioRun) => churnScenario(short ? churnShort : churnDefaults),
  crash: ({ short }: ScenarioRun) => crashScenario(short ? crashShort : crashDefaults),
  stalled: ({ short }: ScenarioRun) => stalledScenario(short ? stalledShort : stalledDefaults),
  overload: ({ short }: ScenarioRun) => overloadScenario(short ? overloadShort : overloadDefaults),
  drain: ({ short }: ScenarioRun) => drainScenario(short ? drainShort : drainDefaults),
  fuzz: ({ short }: ScenarioRun) => fuzzScenario(short ? FUZZ_RUNS_SHORT : FUZZ_RUNS_FULL),
  soak: ({ short, soakMinutes }: ScenarioRun) => soakScenario(short ? soakShort(soakMinutes) : soakDefaults(soakMinutes)),
} satisfies Record<string, (run: ScenarioRun) => Promise<ScenarioResult>>;

export type ScenarioName = keyof typeof scenarios;
export const scenarioNames = Object.keys(scenarios) as ScenarioName[];
/** Run unless asked for: all but the soak, which takes an hour. */
export const defaultScenarios = scenarioNames.filter((name) => name !== 'soak');
