import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { createInterface } from 'node:readline';

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
 * The watcher's program: once told to start (a line on stdin), GETs its URL on a fresh connection
 * every 50 ms (each attempt given up after a second) and prints the wall-clock time (ms) of the
 * first 200, or `never` at its deadline.
 */
const WATCHER = `
const [url, deadlineMs] = [process.argv[1], Number(process.argv[2])];
const { request } = require('node:http');
const attempt = () => new Promise((resolve) => {
  const outgoing = request(url, { agent: false, timeout: 1000, headers: { connection: 'close' } }, (response) => {
    response.resume();
    resolve(response.statusCode);
  });
  outgoing.on('timeout', () => { outgoing.destroy(); resolve(0); });
  outgoing.on('error', () => resolve(0));
  outgoing.end();
});
process.stdin.once('data', async () => {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    if ((await attempt()) === 200) return console.log(String(Date.now()));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  console.log('never');
  process.exit(0);
});
console.log('ready');
`;

/**
 * Watches `url` from a process of its own, from `start()` until it first answers 200, and resolves
 * `answeredAt` with that moment (wall clock, ms since the epoch; Infinity if never within
 * `deadlineMs`). Its own process, so that what it measures is the server's availability, not the
 * event loop of a scenario that also drives thousands of subscribers. `ready` resolves once the
 * process can be started.
 */
export function watchFirstAnswer(url: string, deadlineMs = 60_000): { ready: Promise<void>; start: () => void; answeredAt: Promise<number> } {
  const child = spawn(process.execPath, ['-e', WATCHER, url, String(deadlineMs)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  let ready!: () => void;
  const readyPromise = new Promise<void>((resolve) => (ready = resolve));
  const answeredAt = new Promise<number>((resolve) => {
    lines.on('line', (line) => {
      if (line === 'ready') ready();
      else resolve(line === 'never' ? Number.POSITIVE_INFINITY : Number(line));
    });
    void once(child, 'exit').then(() => resolve(Number.POSITIVE_INFINITY));
  });
  return { ready: readyPromise, start: () => child.stdin!.end('start\n'), answeredAt };
}
