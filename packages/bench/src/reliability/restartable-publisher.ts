import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PublisherBuild, PublisherProcess } from '../process/publisher-process.js';

/**
 * The environment the publisher is deployed with (`docker/Dockerfile`'s `ENV`,
 * docs/configuration.md#memory): glibc keeps 2 malloc arenas instead of one per thread, so the
 * thread pool's compression does not grow native memory in steps for the first half hour. The
 * reliability scenarios run the publisher as deployed; a variable set in the caller's
 * environment wins (`MALLOC_ARENA_MAX=8 pnpm test:reliability ...` measures without it).
 */
export const deployedEnvironment: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/**
 * What every `RestartablePublisher` started from now on runs: `compiled` is what
 * `pnpm test:reliability` measures (tsx roughly doubles start-up, which the crash scenario times).
 */
let defaultBuild: PublisherBuild = 'source';

/** Chooses what every `RestartablePublisher` started from now on runs. */
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

/** Chooses the diagnostics of every `RestartablePublisher` started from now on. */
export function usePublisherDiagnostics(chosen: PublisherDiagnostics): void {
  diagnostics = chosen;
}

export interface RestartablePublisherOptions {
  readonly port: number;
  /** CLI flags beyond port, data directory and log level. */
  readonly flags?: readonly string[];
  /** A configuration file's text (YAML), written beside the data directory and passed with --config. */
  readonly configYaml?: string;
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * The publisher CLI as its own process (a `PublisherProcess`), on a durable log in a data
 * directory that outlives the process (so that it can be killed and started again on the same
 * log), removed by `dispose()`.
 */
export class RestartablePublisher {
  readonly dir = mkdtempSync(join(tmpdir(), 'reliability-publisher-'));
  readonly url: string;
  #process: PublisherProcess | undefined;
  readonly #options: RestartablePublisherOptions;

  constructor(options: RestartablePublisherOptions) {
    this.#options = options;
    this.url = `http://127.0.0.1:${options.port}`;
    if (options.configYaml !== undefined) writeFileSync(join(this.dir, 'publisher.yaml'), options.configYaml);
  }

  get pid(): number {
    if (this.#process === undefined) throw new Error('the publisher is not running');
    return this.#process.pid;
  }

  get running(): boolean {
    return this.#process?.running === true;
  }

  /** Starts the process and resolves once it serves, every source started. */
  async start(): Promise<void> {
    const { port, flags = [], configYaml, env = {} } = this.#options;
    this.#process = await PublisherProcess.start({
      port,
      build: defaultBuild,
      nodeOptions: diagnostics.nodeOptions,
      flags: [
        ...(configYaml === undefined ? [] : ['--config', join(this.dir, 'publisher.yaml')]),
        '--data-dir', join(this.dir, 'data'),
        '--log-level', 'info', '--log-format', 'json',
        ...flags,
      ],
      env: { ...deployedEnvironment, ...process.env, ...env },
      ...(diagnostics.logFile === undefined ? {} : { logFile: diagnostics.logFile }),
    });
  }

  /** Sends `signal` and resolves with how the process ended and how long it took. */
  async stop(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; exitMs: number }> {
    if (this.#process === undefined || !this.running) throw new Error('the publisher is not running');
    return this.#process.kill(signal);
  }

  /** Open file descriptors of the process (Linux). */
  openFiles(): number {
    return readdirSync(`/proc/${this.pid}/fd`).length;
  }

  async dispose(): Promise<void> {
    if (this.running) await this.stop('SIGKILL');
    await this.#process?.logCopied;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
