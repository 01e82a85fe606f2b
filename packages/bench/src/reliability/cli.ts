/**
 * `pnpm test:reliability`: runs the reliability scenarios against real publisher processes on
 * loopback, prints a table of what held and writes `reliability.json`. `--short` runs the sizes
 * CI uses; `--scenario` picks some. See docs/reliability.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { seriesChart } from '../report/charts.js';
import { type PublisherBuild, repositoryRoot } from '../process/publisher-process.js';
import { usePublisherBuild, usePublisherDiagnostics } from './restartable-publisher.js';
import type { ScenarioResult } from './scenario-result.js';
import { defaultScenarios, type ScenarioName, scenarioNames, scenarios } from './scenarios/index.js';

const program = new Command('reliability')
  .description('Churns, kills, stalls, overloads, drains, fuzzes and soaks the publisher; reports what was lost.')
  .addOption(new Option('--scenario <names...>', 'scenarios to run').choices(scenarioNames).default(defaultScenarios))
  .option('--short', 'the short sizes CI runs (seconds, not minutes)', false)
  .option('--soak-minutes <minutes>', 'duration of the soak scenario', '60')
  .option('--out <file>', 'where to write the results', 'reliability-results/reliability.json')
  .addOption(
    new Option('--publisher <build>', 'run the compiled publisher (built first, as deployed) or its TypeScript sources through tsx')
      .choices(['compiled', 'source'])
      .default('compiled'),
  )
  .option('--publisher-node-options <options>', "Node's options for every publisher process, e.g. \"--trace-gc\" (diagnostics: they change what is measured)", '')
  .option('--publisher-log <file>', "append every publisher process's standard output and error to this file")
  .parse();

const options = program.opts<{
  scenario: ScenarioName[];
  short: boolean;
  soakMinutes: string;
  out: string;
  publisher: PublisherBuild;
  publisherNodeOptions: string;
  publisherLog?: string;
}>();
if (options.publisher === 'compiled') {
  process.stderr.write('== building the publisher (pnpm build: protocol and publisher)\n');
  execFileSync('pnpm', ['--filter', '@rdf-stream/protocol', '--filter', '@rdf-stream/publisher', 'build'], { cwd: repositoryRoot, stdio: ['ignore', 'ignore', 'inherit'] });
}
usePublisherBuild(options.publisher);
const fromCaller = (file: string) => resolve(process.env.INIT_CWD ?? process.cwd(), file);
const publisherLog = options.publisherLog === undefined ? undefined : fromCaller(options.publisherLog);
usePublisherDiagnostics({ nodeOptions: options.publisherNodeOptions.split(/\s+/).filter((option) => option !== ''), logFile: publisherLog });
const out = fromCaller(options.out);
for (const file of [out, publisherLog]) if (file !== undefined) mkdirSync(dirname(file), { recursive: true });
const results: ScenarioResult[] = [];
/** No scenario may run for ever: its own duration plus this much (ms). */
const SCENARIO_GRACE_MS = 10 * 60_000;
const deadlineMs = (name: ScenarioName) => (name === 'soak' ? Number(options.soakMinutes) * 60_000 : 10 * 60_000) + SCENARIO_GRACE_MS;
const withDeadline = <T>(work: Promise<T>, ms: number) =>
  Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`did not finish within ${ms / 60_000} min`)), ms).unref())]);
/** Written after every scenario, so that an interrupted run keeps what it measured. */
const save = () =>
  writeFileSync(out, `${JSON.stringify({ generatedAt: new Date().toISOString(), short: options.short, node: process.version, results }, null, 2)}\n`);

for (const name of options.scenario) {
  process.stderr.write(`== ${name}${options.short ? ' (short)' : ''}\n`);
  try {
    results.push(await withDeadline(scenarios[name]({ short: options.short, soakMinutes: Number(options.soakMinutes) }), deadlineMs(name)));
  } catch (error) {
    results.push({ name, weakness: '', seconds: 0, figures: {}, checks: [{ what: 'the scenario ran to its end', holds: false, observed: (error as Error).stack ?? String(error), timed: false }] });
  }
  const last = results.at(-1)!;
  process.stderr.write(`== ${name}: ${last.checks.every((entry) => entry.holds) ? 'holds' : 'FAILS'} ${JSON.stringify(last.figures)}\n`);
  save();
  for (const series of last.series ?? []) {
    const chart = await seriesChart(name, series);
    for (const [extension, content] of [['svg', chart.svg], ['png', chart.png]] as const) {
      const file = join(dirname(out), `${chart.name}.${extension}`);
      writeFileSync(file, content);
      process.stderr.write(`== chart: ${file}\n`);
    }
  }
}

const rows = results.flatMap((result) =>
  result.checks.map((entry, index) => [index === 0 ? result.name : '', entry.holds ? 'holds' : 'FAILS', entry.what, entry.observed]),
);
const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]!.length), 8));
const line = (row: string[]) => `| ${row.map((cell, column) => (column < 3 ? cell.padEnd(widths[column]!) : cell)).join(' | ')} |`;
console.log(line(['scenario', 'result', 'what must hold', 'observed']));
console.log(line(widths.map((width) => '-'.repeat(width)).concat('---')));
for (const row of rows) console.log(line(row));
for (const result of results) console.log(`${result.name} (${result.seconds} s): ${JSON.stringify(result.figures)}`);
console.log(`written: ${out}`);
process.exitCode = results.every((result) => result.checks.every((entry) => entry.holds)) ? 0 : 1;
