import type { RunSummary } from '../scenario/run-benchmark.js';

/** How a run is named in the table, the report and the charts: `poll (smart) + nginx`, `sse (gzip)`. */
export function runLabel(run: Pick<RunSummary, 'mode' | 'pollStrategy' | 'sseEncoding' | 'proxy'>): string {
  const variant = run.pollStrategy ?? run.sseEncoding;
  return `${run.mode}${variant === undefined ? '' : ` (${variant})`}${run.proxy === 'none' ? '' : ` + ${run.proxy}`}`;
}
