import type { RunSummary } from '../scenario/run-benchmark.js';

/** How a run is named in the table, the report and the charts: `poll (smart) + nginx`, `sse (gzip)`, `websocket (ws client)`. */
export function runLabel(run: Pick<RunSummary, 'mode' | 'pollStrategy' | 'sseEncoding' | 'websocketClient' | 'proxy'>): string {
  const variant = run.pollStrategy ?? run.sseEncoding ?? (run.websocketClient === 'ws' ? 'ws client' : undefined);
  return `${run.mode}${variant === undefined ? '' : ` (${variant})`}${run.proxy === 'none' ? '' : ` + ${run.proxy}`}`;
}
