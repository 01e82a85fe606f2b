import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RunSummary, STEAL_WARNING_PERCENT } from '../scenario/run-benchmark.js';
import type { CapacityPlan } from '../analyze/capacity-plan.js';
import type { Chart } from './charts.js';
import { capacityCells } from './capacity-table.js';
import type { ConnectionMemoryRow } from '../analyze/memory-per-connection.js';
import { MEMORY_TABLE_NOTES, memoryCells } from './memory-table.js';
import { gzipNote } from './gzip-note.js';
import { runLabel } from './run-label.js';
import { INSTANCE_TABLE_NOTE, instanceCells } from './instance-table.js';
import { goalCells, goalRows } from './goals.js';
import { logComparison, logComparisonCells } from './log-comparison.js';
import { studyCells } from './study-table.js';
import { WIND_STUDY_DIFFERENCES, WIND_STUDY_POLL_RATIO } from '../analyze/wind-study.js';

const escape = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);

/** Writes each chart as SVG and PNG, and `report.html` that opens offline (charts inline). */
export function writeReport(outDir: string, summary: Record<string, unknown>, runs: readonly RunSummary[], plan: CapacityPlan, charts: readonly Chart[]): Record<string, string> {
  const files: Record<string, string> = {};
  for (const chart of charts) {
    writeFileSync(join(outDir, `${chart.name}.svg`), chart.svg);
    writeFileSync(join(outDir, `${chart.name}.png`), chart.png);
    files[chart.name] = join(outDir, `${chart.name}.png`);
  }
  const rows = runs
    .map(
      (run) =>
        `<tr><td>${escape(runLabel(run))}</td><td>${run.clients}</td><td>${run.connected}</td>` +
        `<td>${run.updatesReceived} / ${run.updatesExpected}</td><td>${run.missedUpdates}</td><td>${run.errors}</td>` +
        `<td>${run.latencyMs.p50}</td><td>${run.latencyMs.p90}</td><td>${run.latencyMs.p99}</td><td>${run.latencyMs.max}</td>` +
        `<td>${run.warmupLatencyMs === null ? '0' : `${run.warmupElements} (p99 ${run.warmupLatencyMs.p99})`}</td>` +
        `<td>${run.serverCpuMilli ? `${run.serverCpuMilli.mean} (${run.serverCpuMilli.max})` : '–'}</td><td>${run.serverCpuMicrosPerUpdate ?? '–'}</td><td>${run.wireBytesPerUpdate ?? '–'}</td>` +
        `<td>${run.serverRssMiB ? `${run.serverRssMiB.mean} (${run.serverRssMiB.max})` : '–'}</td>` +
        `<td>${run.stealPercent === null ? '–' : `${run.stealPercent}${run.stealPercent > STEAL_WARNING_PERCENT ? ' ⚠' : ''}`}</td><td>${run.listenOverflows ?? '–'}</td><td>${run.loadAverage[0]}</td></tr>`,
    )
    .join('\n');
  const perElement = runs
    .map(
      (run) =>
        `<details><summary>${escape(runLabel(run))}, ${run.clients} clients: ${run.perElement.length} elements, ${run.warmupElements} of them warm-up</summary>` +
        `<table><tr><th>seq</th><th>generated (s after the ramp)</th><th>warm-up</th><th>received</th><th>p50 ms</th><th>p99 ms</th><th>max ms</th></tr>` +
        run.perElement
          .map((row) => `<tr><td>${row.seq}</td><td>${row.generatedAtSeconds}</td><td>${row.warmup ? 'yes' : ''}</td><td>${row.received}</td><td>${row.p50}</td><td>${row.p99}</td><td>${row.max}</td></tr>`)
          .join('') +
        '</table></details>',
    )
    .join('\n');
  const cells = capacityCells(plan);
  const capacity =
    `<h2>Capacity plan</h2><p>Cores and network to serve a stream beyond this machine, computed from this run's own measurements (server CPU per update: ${(['sse', 'sse-gzip', 'websocket', 'long-poll'] as const).map((transport) => `${transport} ${plan.inputs.cpuMicrosPerUpdate[transport] === null ? 'not measured' : `${plan.inputs.cpuMicrosPerUpdate[transport]} µs`}`).join(', ')}; polling ${plan.inputs.pollRequestsPerSecond === null ? 'not measured' : `${plan.inputs.pollRequestsPerSecond} requests/s per core`}; ${plan.inputs.bytes ? `${plan.inputs.bytes.identity} bytes per element, ${plan.inputs.bytes.gzip} gzipped` : 'element size not measured'}).</p>` +
    `<table><tr>${cells.header.map((title) => `<th>${escape(title)}</th>`).join('')}</tr>${cells.rows.map((row) => `<tr>${row.map((cell) => `<td>${escape(cell)}</td>`).join('')}</tr>`).join('')}</table>` +
    `<ul>${plan.assumptions.map((assumption) => `<li>${escape(assumption)}</li>`).join('')}</ul>`;
  const memoryRows = memoryCells((summary.memoryPerConnection ?? []) as ConnectionMemoryRow[]);
  const memory =
    memoryRows.rows.length === 0
      ? ''
      : `<h2>Memory per connection</h2><table><tr>${memoryRows.header.map((title) => `<th>${escape(title)}</th>`).join('')}</tr>${memoryRows.rows.map((row) => `<tr>${row.map((cell) => `<td>${escape(cell)}</td>`).join('')}</tr>`).join('')}</table>` +
        `<ul>${MEMORY_TABLE_NOTES.map((note) => `<li>${escape(note)}</li>`).join('')}</ul>`;
  const table = (cells: { header: string[]; rows: string[][] }) =>
    `<table><tr>${cells.header.map((title) => `<th>${escape(title)}</th>`).join('')}</tr>${cells.rows.map((row) => `<tr>${row.map((cell) => `<td>${escape(cell)}</td>`).join('')}</tr>`).join('')}</table>`;
  const instanceRows = instanceCells(runs);
  const instances = instanceRows.rows.length === 0 ? '' : `<h2>Publisher instances and their shared log</h2>${table(instanceRows)}<p>${escape(INSTANCE_TABLE_NOTE)}</p>`;
  const compared = logComparison(runs);
  const logs =
    compared.length === 0
      ? ''
      : `<h2>Latency added by the shared Redis log</h2><p>The same configuration run on one publisher with its file log, then on publisher instances sharing a Redis/Valkey log: the difference is what the shared log costs an update on its way (an append to Redis, each instance's blocking read of it), at the median and at p99.</p>${table(logComparisonCells(compared))}`;
  const goalList = goalRows(runs);
  const goals =
    goalList.length === 0
      ? ''
      : `<h2>Goals</h2><p>Each run of a mode the project holds to a goal, beside the run it is measured against (same client count, same log): p99 in ms, server CPU in µs per update.</p>${table(goalCells(goalList))}`;
  const gzip = runs.filter((run) => run.gzipReading !== undefined).map((run) => `<p>${escape(gzipNote(run))}</p>`).join('');
  const comparison = studyCells(runs);
  const study =
    `<h2>Beside the wind-sensor study</h2><p>V. Pimentel and B. G. Nickerson, <i>Communicating and Displaying Real-Time Data with WebSocket</i> (IEEE Internet Computing, 2012): mean one-way latency in ms (ours: mean, p99 in brackets), ` +
    `the study's polling at ${WIND_STUDY_POLL_RATIO.min} to ${WIND_STUDY_POLL_RATIO.max} × WebSocket or long polling.</p>` +
    `<table><tr>${comparison.header.map((title) => `<th>${escape(title)}</th>`).join('')}</tr>${comparison.rows.map((row) => `<tr>${row.map((cell) => `<td>${escape(cell)}</td>`).join('')}</tr>`).join('')}</table>` +
    `<p>What differs in the set-up:</p><ul>${WIND_STUDY_DIFFERENCES.map((difference) => `<li>${escape(difference)}</li>`).join('')}</ul>`;
  const mal = summary.mal as { table: Array<{ malSeconds: number; maxUsers: number }>; cutoffSeconds: number | null; advice: string } | undefined;
  const throughput = summary.throughput as
    | { requestsPerSecond: number; latencyMs: { p50: number; p99: number }; timeouts: number; loadGeneratorCpuMilli: number; loadGeneratorThreads: number; loadGeneratorBound: boolean; viaProxy?: { requestsPerSecond: number; loadGeneratorBound: boolean }; proxyRatio?: number }
    | undefined;
  const bound = (result: { loadGeneratorBound: boolean }) => (result.loadGeneratorBound ? ' <b>(the load generator was the bottleneck)</b>' : '');
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>RDF stream publisher: benchmark report</title>
<style>body{font-family:system-ui,sans-serif;max-width:1100px;margin:2rem auto;padding:0 1rem;color:#222}table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:right}th{background:#f3f3f3}td:first-child{text-align:left}code{background:#f3f3f3;padding:0 .2rem}figure{margin:1.5rem 0}</style>
</head><body>
<h1>Benchmark report</h1>
<p><code>${escape(String(summary.command))}</code> — ${escape(String(summary.startedAt))} — ${escape(JSON.stringify(summary.machine))}</p>
<h2>Runs</h2>
<table><tr><th>mode</th><th>clients</th><th>connected</th><th>received / expected</th><th>missed</th><th>errors</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>max ms</th><th>warm-up elements (p99 ms)</th><th>server mCPU mean (max)</th><th>server µs CPU per update</th><th>bytes on the wire per update</th><th>server RSS MiB mean (max)</th><th>steal %</th><th>listen overflows</th><th>load average (1 min)</th></tr>
${rows}
</table>
<p>Latency percentiles are over the elements published once every client had its first answer; the elements before that (warm-up) are counted apart. ⚠: the hypervisor stole more than ${STEAL_WARNING_PERCENT} % of the machine's CPU time during the measurement.</p>
<p>Bytes on the wire per update: what the server sent for each update a client got, headers and framing included (an SSE event, a WebSocket frame; for polling a 200 and the 304s answered per 200), without TCP/IP. Load average: the machine's, when the run started (other work on the machine).</p>
${instances}
${logs}
${goals}
${gzip}
${memory}
${study}
<h2>Per element</h2>
${perElement}
${charts.map((chart) => `<figure>${chart.svg}<figcaption>${escape(chart.title)}</figcaption></figure>`).join('\n')}
${capacity}
${throughput ? `<h2>Throughput (autocannon)</h2><p>Publisher alone: <b>${throughput.requestsPerSecond}</b> requests/s (p50 ${throughput.latencyMs.p50} ms, p99 ${throughput.latencyMs.p99} ms, ${throughput.timeouts} timeouts; load generator ${throughput.loadGeneratorCpuMilli} mCPU over ${throughput.loadGeneratorThreads} thread(s))${bound(throughput)}${throughput.viaProxy ? `; behind the proxy: <b>${throughput.viaProxy.requestsPerSecond}</b> requests/s (× ${throughput.proxyRatio})${bound(throughput.viaProxy)}` : ''}.</p>` : ''}
${mal ? `<h2>Maximum acceptable latency (formula 1)</h2><table><tr><th>MAL (s)</th>${mal.table.map((row) => `<td>${row.malSeconds}</td>`).join('')}</tr><tr><th>polling users</th>${mal.table.map((row) => `<td>${row.maxUsers}</td>`).join('')}</tr></table><p>${escape(mal.advice)}</p>` : ''}
</body></html>
`;
  files.report = join(outDir, 'report.html');
  writeFileSync(files.report, html);
  return files;
}
