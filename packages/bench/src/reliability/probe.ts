import { fork } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';

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

/**
 * Watches `url` from a process of its own (`first-answer-watcher.ts`), from `start()` until it
 * first answers 200, and resolves `answeredAt` with that moment (wall clock, ms since the epoch;
 * Infinity if never within `deadlineMs`). Its own process, so that what it measures is the
 * server's availability, not the event loop of a scenario that also drives thousands of
 * subscribers. `ready` resolves once the process can be started.
 */
export function watchFirstAnswer(url: string, deadlineMs = 60_000): { ready: Promise<void>; start: () => void; answeredAt: Promise<number> } {
  const child = fork(fileURLToPath(new URL('./first-answer-watcher.ts', import.meta.url)), [url, String(deadlineMs)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let ready!: () => void;
  const readyPromise = new Promise<void>((resolve) => (ready = resolve));
  const answeredAt = new Promise<number>((resolve) => {
    child.on('message', (message: 'ready' | { answeredAt: number | null }) => {
      if (message === 'ready') ready();
      else resolve(message.answeredAt ?? Number.POSITIVE_INFINITY);
    });
    void once(child, 'exit').then(() => resolve(Number.POSITIVE_INFINITY));
  });
  return { ready: readyPromise, start: () => child.send('start'), answeredAt };
}
