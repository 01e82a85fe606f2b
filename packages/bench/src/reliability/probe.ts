import { request } from 'node:http';

/** One request on a fresh connection: how long until the answer began, and what it was. */
export interface ProbeResult {
  readonly path: string;
  readonly status: number | 'timeout' | 'error';
  readonly ms: number;
  readonly retryAfter: string | undefined;
}

/** GETs `url` on a new connection (no keep-alive), giving up after `timeoutMs`. */
export function probe(url: string, timeoutMs = 15_000): Promise<ProbeResult> {
  const started = performance.now();
  const path = new URL(url).pathname;
  return new Promise((resolve) => {
    const finish = (status: ProbeResult['status'], retryAfter?: string) =>
      resolve({ path, status, ms: Math.round(performance.now() - started), retryAfter });
    const outgoing = request(url, { agent: false, timeout: timeoutMs, headers: { connection: 'close' } }, (response) => {
      finish(response.statusCode ?? 0, response.headers['retry-after']);
      response.resume();
    });
    outgoing.on('timeout', () => {
      outgoing.destroy();
      finish('timeout');
    });
    outgoing.on('error', () => finish('error'));
    outgoing.end();
  });
}

/** Probes each of `urls` every `everyMs` until `stop()`; resolves with every result. */
export function probeEvery(urls: readonly string[], everyMs: number): { stop: () => Promise<ProbeResult[]> } {
  const pending: Array<Promise<ProbeResult>> = [];
  const timer = setInterval(() => {
    for (const url of urls) pending.push(probe(url));
  }, everyMs);
  return {
    stop: async () => {
      clearInterval(timer);
      return Promise.all(pending);
    },
  };
}
