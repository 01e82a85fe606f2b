import type { RunSummary } from '../scenario/run-benchmark.js';
import { runLabel } from './run-label.js';

type Run = Pick<RunSummary, 'mode' | 'clients' | 'latencyMs' | 'missedUpdates' | 'proxy' | 'pollStrategy' | 'sseEncoding' | 'websocketClient' | 'log' | 'serverInstances'>;

/** One configuration run once on a file log (one instance) and once on a Redis log (N instances). */
export interface LogComparisonRow {
  /** The run's name without its log (`sse (identity)`). */
  readonly run: string;
  readonly clients: number;
  readonly redisInstances: number;
  readonly file: { readonly p50: number; readonly p99: number; readonly missedUpdates: number };
  readonly redis: { readonly p50: number; readonly p99: number; readonly missedUpdates: number };
  /** What the shared log added: the Redis run's latency less the file run's (ms; negative: it was faster). */
  readonly addedMs: { readonly p50: number; readonly p99: number };
}

const round = (value: number) => Math.round(value * 10) / 10;

/**
 * Pairs each run on a file log with the run of the same configuration on a Redis log
 * (`--compare-log file,redis`): the latency the shared log added, at p50 and p99 (pure).
 */
export function logComparison(runs: readonly Run[]): LogComparisonRow[] {
  const name = (run: Run) => runLabel({ ...run, log: 'file' });
  return runs
    .filter((run) => run.log === 'file')
    .flatMap((file) => {
      const redis = runs.find((other) => other.log === 'redis' && other.clients === file.clients && name(other) === name(file));
      if (redis === undefined) return [];
      const latency = (run: Run) => ({ p50: run.latencyMs.p50, p99: run.latencyMs.p99, missedUpdates: run.missedUpdates });
      return [
        {
          run: name(file),
          clients: file.clients,
          redisInstances: redis.serverInstances,
          file: latency(file),
          redis: latency(redis),
          addedMs: { p50: round(redis.latencyMs.p50 - file.latencyMs.p50), p99: round(redis.latencyMs.p99 - file.latencyMs.p99) },
        },
      ];
    });
}

export function logComparisonCells(rows: readonly LogComparisonRow[]): { header: string[]; rows: string[][] } {
  const signed = (value: number) => `${value > 0 ? '+' : ''}${value}`;
  const missed = (side: LogComparisonRow['file']) => (side.missedUpdates > 0 ? ` (${side.missedUpdates} missed)` : '');
  return {
    header: ['run', 'clients', 'file log, 1 instance: p50 / p99 ms', 'redis log: instances, p50 / p99 ms', 'added by redis: p50 ms', 'added by redis: p99 ms'],
    rows: rows.map((row) => [
      row.run,
      String(row.clients),
      `${row.file.p50} / ${row.file.p99}${missed(row.file)}`,
      `${row.redisInstances} × ${row.redis.p50} / ${row.redis.p99}${missed(row.redis)}`,
      signed(row.addedMs.p50),
      signed(row.addedMs.p99),
    ]),
  };
}

/** The comparison as text, printed at the end of `--compare-log file,redis`. */
export function logComparisonTable(rows: readonly LogComparisonRow[]): string {
  const { header, rows: cells } = logComparisonCells(rows);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  return ['Latency added by the shared Redis log (the same configuration, run on each log):', line(header), line(widths.map((width) => '-'.repeat(width))), ...cells.map(line)].join('\n');
}
