import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { BenchOptions } from './bench-options.js';

const run = promisify(execFile);
const repositoryRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * Starts the publisher CLI as its own process, so that its CPU and memory are measured apart.
 * Its log is durable, as by default, in a fresh data directory removed when it exits.
 */
export async function startPublisher(options: BenchOptions, clients: number): Promise<ChildProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-publisher-'));
  // node itself (not the tsx launcher, which would run the publisher in a child process), so
  // that the sampled pid is the publisher's.
  const child = spawn(
    process.execPath,
    [
      ...(options.publisherCpuProfDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', options.publisherCpuProfDir]),
      '--import',
      'tsx',
      'packages/publisher/src/cli.ts',
      '--port', String(options.port),
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
      '--log-level', 'info', '--log-format', 'json', // its lines are read as JSON
    ],
    { cwd: repositoryRoot, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  child.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  await publishing(child);
  return child;
}

/**
 * Resolves once a publisher started with `--log-format json` and its standard output piped says
 * it is publishing; rejects with the end of what it printed if it exits first.
 */
export function publishing(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      seen += chunk;
      if (seen.includes('"msg":"publishing')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the publisher exited with ${code}: ${seen.slice(-500)}`)));
  });
}

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
