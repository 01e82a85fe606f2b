import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';

export const repositoryRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * The environment the publisher is deployed with (`docker/Dockerfile`'s `ENV`,
 * docs/configuration.md#memory): glibc keeps 2 malloc arenas instead of one per thread, so the
 * thread pool's compression does not grow native memory in steps for the first half hour. The
 * reliability scenarios run the publisher as deployed; a variable set in the caller's
 * environment wins (`MALLOC_ARENA_MAX=8 pnpm test:reliability ...` measures without it).
 */
export const deployedEnvironment: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };
/** How long a start may take before the scenario gives up on it (ms). */
const START_TIMEOUT_MS = 60_000;

/**
 * What runs: the TypeScript sources through tsx (what the tests run, no build needed), or the
 * compiled JavaScript as deployed (`pnpm build`; what `pnpm test:reliability` measures: tsx
 * roughly doubles start-up, which the crash scenario times).
 */
export type PublisherBuild = 'source' | 'compiled';
let defaultBuild: PublisherBuild = 'source';

/** Chooses what every `PublisherProcess` started from now on runs. */
export function usePublisherBuild(build: PublisherBuild): void {
  defaultBuild = build;
}

/** What every publisher started from now on also gets, to look inside it (docs/reliability.md). */
export interface PublisherDiagnostics {
  /** Node's options for the publisher, before its script (e.g. `--trace-gc`). */
  readonly nodeOptions: readonly string[];
  /** A file the publishers' standard output and error are appended to, each start headed by a line. */
  readonly logFile?: string;
}
let diagnostics: PublisherDiagnostics = { nodeOptions: [] };

/** Chooses the diagnostics of every `PublisherProcess` started from now on. */
export function usePublisherDiagnostics(chosen: PublisherDiagnostics): void {
  diagnostics = chosen;
}

/** Node's arguments before the publisher's own, per build. */
const entryArguments: Record<PublisherBuild, readonly string[]> = {
  // node itself, not the tsx launcher: the pid is the publisher's (signals reach it, /proc reads it).
  source: ['--import', 'tsx', 'packages/publisher/src/cli.ts'],
  // `@rdf-stream/compiled`: workspace packages resolve to their dist/ (packages/protocol/README.md).
  compiled: ['--conditions=@rdf-stream/compiled', 'packages/publisher/bin/rdf-stream-publisher.js'],
};

export interface PublisherProcessOptions {
  readonly port: number;
  /** CLI flags beyond port, data directory and log level. */
  readonly flags?: readonly string[];
  /** A configuration file's text (YAML), written beside the data directory and passed with --config. */
  readonly configYaml?: string;
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * The publisher CLI as its own process, on a durable log in a data directory that outlives the
 * process (so that it can be killed and started again on the same log), removed by `dispose()`.
 */
export class PublisherProcess {
  readonly dir = mkdtempSync(join(tmpdir(), 'reliability-publisher-'));
  readonly url: string;
  #child: ChildProcess | undefined;
  #exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
  /** Settles once the last process's output is in the diagnostics log (if any). */
  #logCopied: Promise<void> = Promise.resolve();
  readonly #options: PublisherProcessOptions;

  constructor(options: PublisherProcessOptions) {
    this.#options = options;
    this.url = `http://127.0.0.1:${options.port}`;
    if (options.configYaml !== undefined) writeFileSync(join(this.dir, 'publisher.yaml'), options.configYaml);
  }

  get pid(): number {
    if (this.#child?.pid === undefined) throw new Error('the publisher is not running');
    return this.#child.pid;
  }

  get running(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Starts the process and resolves once it has listened and started its sources. */
  async start(): Promise<void> {
    const { port, flags = [], configYaml, env = {} } = this.#options;
    const child = spawn(
      process.execPath,
      [
        ...diagnostics.nodeOptions,
        ...entryArguments[defaultBuild],
        ...(configYaml === undefined ? [] : ['--config', join(this.dir, 'publisher.yaml')]),
        '--port', String(port),
        '--data-dir', join(this.dir, 'data'),
        '--log-level', 'info', '--log-format', 'json', // its lines are read as JSON
        ...flags,
      ],
      { cwd: repositoryRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...deployedEnvironment, ...process.env, ...env } },
    );
    this.#child = child;
    if (diagnostics.logFile !== undefined) this.#logCopied = copyOutput(child, diagnostics.logFile);
    this.#exit = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
    let seen = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (seen = (seen + chunk).slice(-4_000)));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the publisher did not start within ${START_TIMEOUT_MS} ms: ${seen.slice(-1_000)}`)), START_TIMEOUT_MS);
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        seen = (seen + chunk).slice(-4_000);
        if (seen.includes('"msg":"publishing')) {
          clearTimeout(timer);
          resolve();
        }
      });
      void this.#exit!.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`the publisher exited (${code ?? signal}) before it started: ${seen.slice(-1_000)}`));
      });
    });
  }

  /** Sends `signal` and resolves with how the process ended and how long it took. */
  async stop(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; exitMs: number }> {
    const exit = this.#exit;
    if (exit === undefined || !this.running) throw new Error('the publisher is not running');
    const sentAt = performance.now();
    this.#child!.kill(signal);
    const ended = await exit;
    return { ...ended, exitMs: Math.round(performance.now() - sentAt) };
  }

  /** Open file descriptors of the process (Linux). */
  openFiles(): number {
    return readdirSync(`/proc/${this.pid}/fd`).length;
  }

  async dispose(): Promise<void> {
    if (this.running) await this.stop('SIGKILL');
    await this.#logCopied;
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Appends the child's output to `file` (after a line naming the process); settles once it has all been written. */
function copyOutput(child: ChildProcess, file: string): Promise<void> {
  const log = createWriteStream(file, { flags: 'a' });
  log.write(`== publisher ${child.pid} started ${new Date().toISOString()}: ${child.spawnargs.slice(1).join(' ')}\n`);
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  child.once('close', () => log.end());
  return finished(log);
}
