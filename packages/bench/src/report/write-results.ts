import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import type { CapacityPlan } from '../analyze/capacity-plan.js';
import type { MalAnalysis } from '../analyze/mal.js';
import { connectionMemoryRows } from '../analyze/memory-per-connection.js';
import type { ThroughputResult } from '../collect/throughput.js';
import { type RunSummary, STEAL_WARNING_PERCENT } from '../scenario/run-benchmark.js';
import { benchCharts } from './charts.js';
import { writeReport } from './html-report.js';
import { gzipNote } from './gzip-note.js';
import { runLabel } from './run-label.js';
import { goalCells, goalRows } from './goals.js';
import { logComparison, logComparisonCells } from './log-comparison.js';
import { INSTANCE_TABLE_NOTE, instanceCells } from './instance-table.js';
import { PEER_COMPARISON_NOTE, peerComparison, peerComparisonCells } from './peer-comparison.js';

/**
 * `summary.json` (schema in docs/bench.md), `latencies.csv` (the 10 % sample) and the report
 * (`report.html` with its charts as SVG and PNG files).
 */
export async function writeResults(
  outDir: string,
  command: string,
  runs: readonly RunSummary[],
  plan: CapacityPlan,
  throughput?: { publisher: ThroughputResult; proxy?: ThroughputResult },
  mal?: MalAnalysis,
): Promise<Record<string, string>> {
  mkdirSync(outDir, { recursive: true });
  const summary = {
    command,
    startedAt: new Date().toISOString(),
    machine: {
      cores: cpus().length,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: process.platform,
      // When the summary is written; each run has its own from when it started.
      loadAverage: loadavg().map((value) => Math.round(value * 100) / 100),
    },
    runs: runs.map(({ samples: _samples, memory, ...run }) => ({ ...run, memory: memory === null ? null : (({ snapshots: _snapshots, ...rest }) => rest)(memory) })),
    memoryPerConnection: connectionMemoryRows(runs),
    ...(throughput ? { throughput: { ...throughput.publisher, ...(throughput.proxy ? { viaProxy: throughput.proxy, proxyRatio: Math.round((throughput.proxy.requestsPerSecond / throughput.publisher.requestsPerSecond) * 100) / 100 } : {}) } } : {}),
    ...(logComparison(runs).length > 0 ? { logComparison: logComparison(runs) } : {}),
    ...(peerComparison(runs).length > 0 ? { peerComparison: peerComparison(runs) } : {}),
    ...(goalRows(runs).length > 0 ? { goals: goalRows(runs) } : {}),
    capacityPlan: plan,
    ...(mal ? { mal } : {}),
  };
  const summaryPath = join(outDir, 'summary.json');
  writeFileSync(summaryPath, `${JSON.stringify(summary, null, 2)}\n`);
  const csvPath = join(outDir, 'latencies.csv');
  const lines = ['mode,clients,seq,latencyMs'];
  for (const run of runs) for (const [seq, latency] of run.samples) lines.push(`${run.mode},${run.clients},${seq},${latency}`);
  writeFileSync(csvPath, `${lines.join('\n')}\n`);
  const markdownPath = join(outDir, 'report.md');
  writeFileSync(markdownPath, markdownReport(command, runs));
  return { summary: summaryPath, csv: csvPath, markdown: markdownPath, ...writeReport(outDir, summary, runs, plan, await benchCharts(runs, plan, mal, summary.memoryPerConnection)) };
}

/**
 * Instances sharing a log run the stream's source once (the lease holder): a run that saw half
 * again as many elements as its interval gives had more than one source.
 */
export function sourceRunnersNote(run: Pick<RunSummary, 'mode' | 'clients' | 'serverInstances' | 'updatesPublished' | 'durationSeconds' | 'intervalSeconds'>): string | undefined {
  const due = Math.floor(run.durationSeconds / run.intervalSeconds) + 1;
  if (run.serverInstances < 2 || run.updatesPublished <= due * 1.5) return undefined;
  return `(!) ${run.mode}, ${run.clients} clients: ${run.updatesPublished} elements in ${run.durationSeconds} s at one per ${run.intervalSeconds} s: more than one of the ${run.serverInstances} instances ran the stream's source.`;
}

/** What a run's errors were, most frequent first: `errors: 4 × ECONNRESET, 1 × HTTP 503 PUB_ERR_OVERLOADED`. */
export function errorsNote(run: Parameters<typeof runLabel>[0] & Pick<RunSummary, 'clients' | 'errors' | 'timeouts' | 'errorCauses'>): string {
  const causes = Object.entries(run.errorCauses).sort(([, a], [, b]) => b - a);
  const named = causes.map(([cause, count]) => `${count} × ${cause}`).join(', ');
  return `${runLabel(run)}, ${run.clients} clients: ${run.errors} errors (${run.timeouts} timeouts)${named === '' ? '' : `: ${named}`}.`;
}

/** The table printed at the end (and in report.md): its header, a row per run, and the notes under it. */
export function resultCells(runs: readonly RunSummary[]): { header: string[]; rows: string[][]; notes: string[] } {
  const header = ['mode', 'clients', 'connected', 'received/expected', 'missed', 'errors', 'p50 ms', 'p99 ms', 'max ms', 'warm-up', 'server mCPU', 'µs CPU/update', 'bytes/update', 'server MiB', 'fleet CPU s', 'steal %', 'listen overflows', 'load avg'];
  const rows = runs.map((run) => [
    runLabel(run),
    String(run.clients),
    String(run.connected),
    `${run.updatesReceived}/${run.updatesExpected}`,
    String(run.missedUpdates),
    String(run.errors),
    String(run.latencyMs.p50),
    String(run.latencyMs.p99),
    String(run.latencyMs.max),
    run.warmupLatencyMs === null ? '0' : `${run.warmupElements} (p99 ${run.warmupLatencyMs.p99})`,
    run.serverCpuMilli ? `${run.serverCpuMilli.mean} (max ${run.serverCpuMilli.max})` : '-',
    String(run.serverCpuMicrosPerUpdate ?? '-'),
    String(run.wireBytesPerUpdate ?? '-'),
    run.serverRssMiB ? `${run.serverRssMiB.mean} (max ${run.serverRssMiB.max})` : '-',
    String(run.fleetCpuSeconds),
    run.stealPercent === null ? '-' : `${run.stealPercent}${run.stealPercent > STEAL_WARNING_PERCENT ? ' (!)' : ''}`,
    String(run.listenOverflows ?? '-'),
    String(run.loadAverage[0]),
  ]);
  const notes = [
    'Latency percentiles are over the elements published once every client was connected; warm-up: elements before that (their p99).',
    'bytes/update: what the server sent per delivered update, headers and framing included (polling: a 200 and the 304s per 200).',
    'load avg: the machine\'s 1-minute load average when the run started (other work on the machine: compare runs made back to back).',
    ...runs.flatMap((run) => (run.errors === 0 ? [] : [errorsNote(run)])),
    ...runs.flatMap((run) => (run.gzipReading === undefined ? [] : [gzipNote(run)])),
    ...runs
      .filter((run) => run.sourceAddressesSkipped.length > 0)
      .map((run) => `${runLabel(run)}, ${run.clients} clients: passed over ${run.sourceAddressesSkipped.map((skipped) => `${skipped.address} (${skipped.freePorts} ports free)`).join(', ')}, short of ports for a share of the clients (open or in TIME_WAIT).`),
    ...runs.flatMap((run) => {
      const note = sourceRunnersNote(run);
      return note === undefined ? [] : [note];
    }),
    ...runs
      .filter((run) => run.stealPercent !== null && run.stealPercent > STEAL_WARNING_PERCENT)
      .map((run) => `(!) ${run.mode}, ${run.clients} clients: the hypervisor stole ${run.stealPercent} % of the machine's CPU time; its figures are not the publisher's alone.`),
  ];
  return { header, rows, notes };
}

/** The table printed at the end. */
export function resultTable(runs: readonly RunSummary[]): string {
  const { header, rows, notes } = resultCells(runs);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line), '', ...notes].join('\n');
}


/** A Markdown table; `|` in a cell is escaped. */
function markdownTable({ header, rows }: { header: string[]; rows: string[][] }): string {
  const row = (cells: string[]) => `| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [row(header), row(header.map(() => '---')), ...rows.map(row)].join('\n');
}

/** `report.md`: the runs, the instances and their shared log, and what the shared log added (the HTML report has the charts). */
export function markdownReport(command: string, runs: readonly RunSummary[]): string {
  const results = resultCells(runs);
  const instances = instanceCells(runs);
  const compared = logComparison(runs);
  const goals = goalRows(runs);
  const peers = peerComparison(runs);
  return [
    '# Benchmark report',
    '',
    `\`${command}\``,
    '',
    '## Runs',
    '',
    markdownTable(results),
    '',
    ...results.notes.map((note) => `- ${note}`),
    ...(instances.rows.length === 0 ? [] : ['', '## Publisher instances and their shared log', '', markdownTable(instances), '', INSTANCE_TABLE_NOTE]),
    ...(compared.length === 0 ? [] : ['', '## Latency added by the shared Redis log', '', markdownTable(logComparisonCells(compared))]),
    ...(peers.length === 0 ? [] : ['', '## The publisher beside nchan', '', markdownTable(peerComparisonCells(peers)), '', PEER_COMPARISON_NOTE]),
    ...(goals.length === 0 ? [] : ['', '## Goals', '', markdownTable(goalCells(goals))]),
    '',
  ].join('\n');
}
