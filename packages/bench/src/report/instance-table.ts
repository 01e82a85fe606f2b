import type { RunSummary } from '../scenario/run-benchmark.js';
import { runLabel } from './run-label.js';

type Run = Pick<RunSummary, 'mode' | 'clients' | 'proxy' | 'pollStrategy' | 'sseEncoding' | 'websocketClient' | 'log' | 'serverInstances' | 'instances' | 'redis'>;

const meanMax = (figure: { mean: number; max: number } | null | undefined) => (figure == null ? '–' : `${figure.mean} (max ${figure.max})`);

/**
 * Each publisher instance of the runs that had several or a Redis log, then their Redis/Valkey:
 * CPU and RSS sampled once a second (mean and max), and the server's own `used_memory` (pure).
 */
export function instanceCells(runs: readonly Run[]): { header: string[]; rows: string[][] } {
  const header = ['run', 'clients', 'process', 'its clients', 'mCPU mean (max)', 'RSS MiB mean (max)', 'used_memory MiB (peak)'];
  const rows = runs
    .filter((run) => run.log === 'redis' || run.serverInstances > 1)
    .flatMap((run) => [
      ...run.instances.map((instance, index) => [runLabel(run), String(run.clients), `publisher ${index + 1} (${new URL(instance.url).host})`, String(instance.clients), meanMax(instance.cpuMilli), meanMax(instance.rssMiB), '']),
      ...(run.redis === undefined
        ? []
        : [
            [
              runLabel(run),
              String(run.clients),
              `redis ${new URL(run.redis.url).host}${run.redis.appendfsync === null ? '' : ` (appendfsync ${run.redis.appendfsync})`}`,
              '',
              meanMax(run.redis.cpuMilli),
              meanMax(run.redis.rssMiB),
              run.redis.usedMemoryMiB === null ? '–' : `${run.redis.usedMemoryMiB} (${run.redis.usedMemoryPeakMiB ?? '–'})`,
            ],
          ]),
    ]);
  return { header, rows };
}

export const INSTANCE_TABLE_NOTE =
  'Per process: the "server" figures of the run are the publishers\' sum (with the proxy\'s); Redis is apart. ' +
  'used_memory is what Redis\'s allocator holds for data (the log, its clients\' buffers), read at the end of the measurement; its RSS adds the allocator\'s slack and the AOF rewrite buffer. ' +
  'A "–" for Redis CPU and RSS: a --redis-url server not on this machine.';

export function instanceTable(runs: readonly Run[]): string {
  const { header, rows } = instanceCells(runs);
  if (rows.length === 0) return '';
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  return ['Publisher instances and their shared log:', line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line), INSTANCE_TABLE_NOTE].join('\n');
}
