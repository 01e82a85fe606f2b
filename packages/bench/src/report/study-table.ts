import { WIND_STUDY_DIFFERENCES, WIND_STUDY_POLL_RATIO, WIND_STUDY_ROWS } from '../analyze/wind-study.js';
import type { RunSummary } from '../scenario/run-benchmark.js';

type Run = Pick<RunSummary, 'mode' | 'clients' | 'latencyMs' | 'missedUpdates' | 'proxy' | 'pollStrategy' | 'sseEncoding' | 'websocketClient'>;

const MODES = ['websocket', 'sse', 'long-poll', 'poll'] as const;

/**
 * The wind-sensor study's means beside this run's, by transport: one row per site of the study,
 * then one per client count of this run (mean, and p99 in brackets; a run that missed updates
 * says how many), and polling's mean over WebSocket's, the study's ratio. Only the study's own
 * variants count: fixed polling, identity SSE, no proxy.
 */
export function studyCells(runs: readonly Run[]): { header: string[]; rows: string[][] } {
  const header = ['', 'WebSocket', 'SSE', 'long polling', 'polling', 'polling ÷ WebSocket'];
  const mean = (value: number | null) => (value === null ? '–' : `${value}`);
  const ratio = (poll: number | null, websocket: number | null) => (poll === null || websocket === null || websocket === 0 ? '–' : `${(poll / websocket).toFixed(1)}`);
  const rows = WIND_STUDY_ROWS.map((row) => [`study: ${row.site} (1 client)`, mean(row.websocket), '–', mean(row.longPoll), mean(row.poll), ratio(row.poll, row.websocket)]);
  const comparable = runs.filter((run) => run.proxy === 'none' && (run.pollStrategy ?? 'fixed') === 'fixed' && (run.sseEncoding ?? 'identity') === 'identity' && (run.websocketClient ?? 'lean') === 'lean');
  for (const clients of [...new Set(comparable.map((run) => run.clients))].sort((a, b) => a - b)) {
    const of = (mode: (typeof MODES)[number]) => comparable.find((run) => run.clients === clients && run.mode === mode);
    const cell = (run: Run | undefined) =>
      run === undefined ? '–' : `${run.latencyMs.mean} (p99 ${run.latencyMs.p99})${run.missedUpdates > 0 ? `, ${run.missedUpdates} missed` : ''}`;
    rows.push([`this run: ${clients} clients`, ...MODES.map((mode) => cell(of(mode))), ratio(of('poll')?.latencyMs.mean ?? null, of('websocket')?.latencyMs.mean ?? null)]);
  }
  return { header, rows };
}

/** The comparison as text, with the study's ratio and what differs in the set-up. */
export function studyTable(runs: readonly Run[]): string {
  const { header, rows } = studyCells(runs);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  return [
    'Beside the wind-sensor study (Pimentel and Nickerson 2012; mean latency in ms, ours with p99):',
    line(header),
    line(widths.map((width) => '-'.repeat(width))),
    ...rows.map(line),
    `The study: polling ${WIND_STUDY_POLL_RATIO.min} to ${WIND_STUDY_POLL_RATIO.max} × the mean of WebSocket or long polling in all 12 tests. What differs here:`,
    ...WIND_STUDY_DIFFERENCES.map((difference) => `- ${difference}`),
  ].join('\n');
}
