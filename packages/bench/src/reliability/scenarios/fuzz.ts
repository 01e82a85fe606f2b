import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, progress, type ScenarioResult } from '../scenario-result.js';

const repositoryRoot = fileURLToPath(new URL('../../../../../', import.meta.url));

/** Values generated per property at `FUZZ_RUNS` = 1 (docs/reliability.md#fuzz: 133 500 at 10 000). */
const VALUES_PER_RUN = 13.35;

interface VitestReport {
  readonly numTotalTests: number;
  readonly numPassedTests: number;
  readonly numFailedTests: number;
  readonly testResults: ReadonlyArray<{ readonly assertionResults: ReadonlyArray<{ readonly fullName: string; readonly status: string }> }>;
}

/**
 * Fuzz: the property-based tests (`*.property.test.ts`, fast-check) at `runs` values per
 * property. Guards against injected SSE fields, crashes, 5xx and leaked internals on any input.
 */
export async function fuzzScenario(runs: number): Promise<ScenarioResult> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'reliability-fuzz-'));
  const out = join(dir, 'fuzz.json');
  progress('fuzz', `property tests at FUZZ_RUNS=${runs} (about ${Math.round(runs * VALUES_PER_RUN).toLocaleString('en')} values)`);
  try {
    const child = spawn(process.execPath, [join(repositoryRoot, 'node_modules/vitest/vitest.mjs'), 'run', '.property.test', '--reporter=json', `--outputFile=${out}`], {
      cwd: repositoryRoot,
      env: { ...process.env, FUZZ_RUNS: String(runs) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await once(child, 'exit');
    const report = JSON.parse(readFileSync(out, 'utf8')) as VitestReport;
    const failed = report.testResults.flatMap((file) => file.assertionResults.filter((test) => test.status !== 'passed').map((test) => test.fullName));
    return {
      name: 'fuzz',
      weakness: 'injected SSE fields, crashes, 5xx and leaked internals on inputs nobody wrote a case for',
      seconds: Math.round((performance.now() - started) / 1000),
      figures: { fuzzRuns: runs, values: Math.round(runs * VALUES_PER_RUN), properties: report.numTotalTests, failed: report.numFailedTests },
      checks: [
        check(
          'every property holds: no injected SSE field, no crash, no 5xx, answers within limits',
          report.numFailedTests === 0 && report.numPassedTests === report.numTotalTests && report.numTotalTests > 0,
          failed.length === 0 ? `${report.numPassedTests} properties, ${Math.round(runs * VALUES_PER_RUN).toLocaleString('en')} values` : `failed: ${failed.join('; ')}`,
        ),
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
