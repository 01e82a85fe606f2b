import type { RunSummary } from '../scenario/run-benchmark.js';

/**
 * How a run is named in the table, the report and the charts: `poll (smart) + nginx`, `sse (gzip)`,
 * `websocket (ws client)`, `long-poll (undici client)`, `poll (fixed, undici client)`, `sse (identity) on 2 × redis` (publisher
 * instances sharing a Redis log), `sse (identity) on nchan` (the peer, not the publisher).
 */
export function runLabel(
  run: Pick<RunSummary, 'mode' | 'pollStrategy' | 'sseEncoding' | 'websocketClient' | 'proxy'> & Partial<Pick<RunSummary, 'log' | 'serverInstances' | 'httpClient' | 'peer'>>,
): string {
  const client = run.websocketClient === 'ws' ? 'ws client' : run.httpClient === 'undici' ? 'undici client' : undefined;
  const variants = [run.pollStrategy ?? run.sseEncoding, client].filter((part) => part !== undefined);
  const variant = variants.length === 0 ? undefined : variants.join(', ');
  const log = run.log === 'redis' ? ` on ${run.serverInstances ?? 1} × redis` : '';
  const peer = run.peer === undefined ? '' : ` on ${run.peer}`;
  return `${run.mode}${variant === undefined ? '' : ` (${variant})`}${run.proxy === 'none' ? '' : ` + ${run.proxy}`}${log}${peer}`;
}
