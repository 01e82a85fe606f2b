import { type ChildProcess, execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PublisherProcess, repositoryRoot } from '../process/publisher-process.js';
import { PrivateValkey } from '../process/private-valkey.js';
import { freePort } from '../reliability/free-port.js';
import { type BenchOptions, HEARTBEAT_MS } from './bench-options.js';

const run = promisify(execFile);

/** Where the publishers of a run keep their logs: a data directory each, or one Redis/Valkey they share. */
export type RunLog = { readonly kind: 'file' } | { readonly kind: 'redis'; readonly url: string; readonly keyPrefix: string; readonly baseUrl: string };

/**
 * Starts the publisher CLI as its own process, so that its CPU and memory are measured apart.
 * With a file log (the default), its log is durable in a fresh data directory removed when it
 * exits; with a Redis log, every instance gets the same flags (one of them takes the source's
 * lease, the others serve what it appends).
 */
export async function startPublisher(options: BenchOptions, clients: number, port = options.port, log: RunLog = { kind: 'file' }): Promise<PublisherProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-publisher-'));
  const publisher = await PublisherProcess.start({
    port,
    nodeOptions: options.publisherCpuProfDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', options.publisherCpuProfDir],
    flags: [
      '--interval', String(options.intervalSeconds),
      '--facilities', String(options.facilities),
      '--seed', String(options.seed),
      '--max-subscribers', String(clients + 100),
      '--max-long-poll-waiters', String(clients + 100),
      '--max-event-loop-delay-ms', '0',
      // The benchmark measures the publisher at saturation: no shedding.
      '--max-event-loop-turn-ms', '0',
      '--heartbeat-ms', String(HEARTBEAT_MS),
      '--workers', String(options.serverWorkers ?? 1),
      '--data-dir', dataDir,
      ...(log.kind === 'redis' ? ['--log', 'redis', '--redis-url', log.url, '--redis-key-prefix', log.keyPrefix, '--base-url', log.baseUrl] : []),
      '--log-level', 'info', '--log-format', 'json',
    ],
  }).catch((error: unknown) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  });
  void publisher.exited.then(() => rmSync(dataDir, { recursive: true, force: true }));
  return publisher;
}

/** The publishers of a run and the Redis/Valkey they share (the bench's own unless `--redis-url`). */
export interface ServerInstances {
  readonly publishers: readonly PublisherProcess[];
  /** Log redis only: the server's URL, and the bench's own Valkey when it started one. */
  readonly redis?: { readonly url: string; readonly own: PrivateValkey | undefined };
  stop(): Promise<void>;
}

/**
 * Starts `instances` publishers on consecutive ports from `--port`: one with a file log, or
 * several sharing one Redis/Valkey (started here on a free port unless `--redis-url`), each
 * run under a key prefix of its own so that no run reads another's log, and all with the first's
 * base URL (every instance of a stream must name it the same). They start one after the other:
 * the first takes the source's lease before the others ask for it.
 */
export async function startServerInstances(options: BenchOptions, log: 'file' | 'redis', instances: number, clients: number): Promise<ServerInstances> {
  const own = log === 'redis' && options.redisUrl === undefined ? await PrivateValkey.start(await freePort(), options.redisAppendfsync) : undefined;
  const redisUrl = own?.url ?? options.redisUrl;
  // One base URL for all, the first instance's: the address the documents name, as a load balancer's would be.
  const runLog: RunLog =
    log === 'redis' && redisUrl !== undefined ? { kind: 'redis', url: redisUrl, keyPrefix: `bench-${Date.now()}-${process.pid}`, baseUrl: `http://127.0.0.1:${options.port}` } : { kind: 'file' };
  const publishers: PublisherProcess[] = [];
  const stop = async () => {
    await Promise.all(publishers.map((publisher) => publisher.stop()));
    await own?.stop();
  };
  try {
    for (let index = 0; index < instances; index++) publishers.push(await startPublisher(options, clients, options.port + index, runLog));
  } catch (error) {
    await stop();
    throw error;
  }
  return { publishers, ...(runLog.kind === 'redis' ? { redis: { url: runLog.url, own } } : {}), stop };
}

/** Stops a helper process of the bench (not a publisher: `PublisherProcess.stop`) with SIGTERM. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

/** Starts nginx or Varnish in front of `upstream` with scripts/proxy.sh; resolves with its pid. */
export async function startProxy(proxy: 'nginx' | 'varnish', upstream: string, port: number, dir: string): Promise<number> {
  const { stdout } = await run('bash', [`${repositoryRoot}scripts/proxy.sh`, 'start', proxy, '--upstream', upstream, '--port', String(port), '--dir', dir]);
  return Number(stdout.trim());
}

export async function stopProxy(proxy: 'nginx' | 'varnish', dir: string): Promise<void> {
  await run('bash', [`${repositoryRoot}scripts/proxy.sh`, 'stop', proxy, '--dir', dir]).catch(() => undefined);
}

/** A process and every process below it (a cluster primary and its workers), for sampling. */
export async function processTree(pid: number): Promise<number[]> {
  const children = await run('pgrep', ['-P', String(pid)]).then(
    ({ stdout }) => stdout.trim().split('\n').filter(Boolean).map(Number),
    () => [] as number[], // pgrep exits 1 when there is none
  );
  return [pid, ...(await Promise.all(children.map(processTree))).flat()];
}
