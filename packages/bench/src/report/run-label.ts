import type { RunSummary } from '../scenario/run-benchmark.js';

/**
 * How a run is named in the table, the report and the charts: `poll (smart) + nginx`, `sse (gzip)`,
 * `websocket (ws client)`, `sse (identity) on 2 × redis` (publisher instances sharing a Redis log),
 * `sse (identity) on nchan` (the peer, not the publisher).
 */
export function runLabel(run: Pick<RunSummary, 'mode' | 'pollStrategy' | 'sseEncoding' | 'websocketClient' | 'proxy'> & Partial<Pick<RunSummary, 'log' | 'serverInstances' | 'peer'>>): string {
  const variant = run.pollStrategy ?? run.sseEncoding ?? (run.websocketClient === 'ws' ? 'ws client' : undefined);
  const log = run.log === 'redis' ? ` on ${run.serverInstances ?? 1} × redis` : '';
  const peer = run.peer === undefined ? '' : ` on ${run.peer}`;
  return `${run.mode}${variant === undefined ? '' : ` (${variant})`}${run.proxy === 'none' ? '' : ` + ${run.proxy}`}${log}${peer}`;
}
