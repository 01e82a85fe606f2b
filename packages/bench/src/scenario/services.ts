import { type ChildProcess, execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PublisherProcess, repositoryRoot } from '../process/publisher-process.js';
import type { BenchOptions } from './bench-options.js';

const run = promisify(execFile);

/**
 * Starts the publisher CLI as its own process, so that its CPU and memory are measured apart.
 * Its log is durable, as by default, in a fresh data directory removed when it exits.
 */
export async function startPublisher(options: BenchOptions, clients: number): Promise<PublisherProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-publisher-'));
  const publisher = await PublisherProcess.start({
    port: options.port,
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
      '--workers', String(options.serverWorkers ?? 1),
      '--data-dir', dataDir,
      '--log-level', 'info', '--log-format', 'json',
    ],
  }).catch((error: unknown) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  });
  void publisher.exited.then(() => rmSync(dataDir, { recursive: true, force: true }));
  return publisher;
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
