import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { get } from 'node:http';
import { finished } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';

export const repositoryRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/** How long a start may take before it is given up and the process killed (ms). */
export const PUBLISHER_START_TIMEOUT_MS = 60_000;
/** How long `stop()` waits after SIGTERM (the publisher drains its subscribers) before SIGKILL (ms). */
export const PUBLISHER_STOP_TIMEOUT_MS = 15_000;
/** How often a starting publisher's `/health` is asked (ms). */
const HEALTH_POLL_INTERVAL_MS = 20;
/** How much of the publisher's output is kept for error messages (characters). */
const OUTPUT_TAIL_CHARS = 4_000;

/**
 * What runs: the TypeScript sources through tsx (no build needed), or the compiled JavaScript as
 * deployed (`pnpm build`; tsx roughly doubles start-up).
 */
export type PublisherBuild = 'source' | 'compiled';

/** Node's arguments before the publisher's own, per build. */
const entryArguments: Record<PublisherBuild, readonly string[]> = {
  // node itself, not the tsx launcher: the pid is the publisher's (signals reach it, /proc reads it).
  source: ['--import', 'tsx', 'packages/publisher/src/cli.ts'],
  // `@rdf-stream/compiled`: workspace packages resolve to their dist/ (packages/protocol/README.md).
  compiled: ['--conditions=@rdf-stream/compiled', 'packages/publisher/bin/rdf-stream-publisher.js'],
};

/**
 * Node's options every launcher of the publisher gives it (its installed command, which starts
 * node again with them; `pnpm start`; the Docker image): V8's memory reducer off
 * (docs/configuration.md, "Node's options"). The benchmark measures the publisher as it is run.
 */
export const PUBLISHER_NODE_OPTIONS: readonly string[] = ['--no-memory-reducer'];

export interface PublisherLaunch {
  readonly port: number;
  /** The CLI's flags beyond `--port`. */
  readonly flags?: readonly string[];
  /** Node's options, before the publisher's script (e.g. `--cpu-prof`, `--trace-gc`). */
  readonly nodeOptions?: readonly string[];
  /** Default: `source`. */
  readonly build?: PublisherBuild;
  /** The process's whole environment; default: this process's. */
  readonly env?: NodeJS.ProcessEnv;
  /** A file the process's standard output and error are appended to, headed by a line naming it. */
  readonly logFile?: string;
}

export interface PublisherExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * The publisher CLI as a process of its own, so that its CPU and memory are measured apart and it
 * can be signalled. Started by `PublisherProcess.start`, which resolves once `GET /health` answers
 * with every source started; its output is read all along (a full pipe would stall it), and the
 * end of it is kept for error messages.
 */
export class PublisherProcess {
  readonly url: string;
  /** Settles when the process has exited. */
  readonly exited: Promise<PublisherExit>;
  /** Settles once all the process's output is in the log file (if any). */
  readonly logCopied: Promise<void>;
  readonly #child: ChildProcess;
  #output = '';
  /** Serving, and not yet signalled by this process: an exit now is unexpected, and said on stderr. */
  #serving = false;

  private constructor(launch: PublisherLaunch) {
    this.url = `http://127.0.0.1:${launch.port}`;
    this.#child = spawn(
      process.execPath,
      [...PUBLISHER_NODE_OPTIONS, ...(launch.nodeOptions ?? []), ...entryArguments[launch.build ?? 'source'], '--port', String(launch.port), ...(launch.flags ?? [])],
      { cwd: repositoryRoot, stdio: ['ignore', 'pipe', 'pipe'], env: launch.env ?? process.env },
    );
    this.exited = once(this.#child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
    for (const stream of [this.#child.stdout!, this.#child.stderr!]) {
      stream.setEncoding('utf8').on('data', (chunk: string) => (this.#output = (this.#output + chunk).slice(-OUTPUT_TAIL_CHARS)));
    }
    this.logCopied = launch.logFile === undefined ? Promise.resolve() : copyOutput(this.#child, launch.logFile);
    void this.exited.then(({ code, signal }) => {
      if (this.#serving) process.stderr.write(`the publisher ${this.pid} exited (${code ?? signal}) unasked: ${this.#output.slice(-1_000)}\n`);
    });
  }

  /** Starts the publisher; resolves once it serves, rejects (the process killed) if it exits or times out first. */
  static async start(launch: PublisherLaunch): Promise<PublisherProcess> {
    const publisher = new PublisherProcess(launch);
    try {
      await publisher.#untilServing();
      publisher.#serving = true;
    } catch (error) {
      if (publisher.running) await publisher.kill('SIGKILL');
      throw error;
    }
    return publisher;
  }

  get pid(): number {
    return this.#child.pid!;
  }

  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** The end of what the process printed (standard output and error), for error messages. */
  get output(): string {
    return this.#output;
  }

  /** Sends `signal` and resolves with how the process ended and how long it took. */
  async kill(signal: NodeJS.Signals): Promise<PublisherExit & { readonly exitMs: number }> {
    const sentAt = performance.now();
    this.#serving = false;
    if (this.running) this.#child.kill(signal);
    const ended = await this.exited;
    return { ...ended, exitMs: Math.round(performance.now() - sentAt) };
  }

  /** SIGTERM (the publisher drains), then SIGKILL if it has not exited within `PUBLISHER_STOP_TIMEOUT_MS`. */
  async stop(): Promise<PublisherExit> {
    if (!this.running) return this.exited;
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), PUBLISHER_STOP_TIMEOUT_MS);
    try {
      return await this.kill('SIGTERM');
    } finally {
      clearTimeout(timer);
    }
  }

  /** Resolves once `/health` answers and no source is still `starting`. */
  async #untilServing(): Promise<void> {
    const deadline = performance.now() + PUBLISHER_START_TIMEOUT_MS;
    let exit: PublisherExit | undefined;
    void this.exited.then((ended) => (exit = ended));
    for (;;) {
      const status = await healthStatus(`${this.url}/health`);
      if (exit !== undefined) throw new Error(`the publisher exited (${exit.code ?? exit.signal}) before it served: ${this.#output.slice(-1_000)}`);
      if (status !== undefined && status !== 'starting') return;
      if (performance.now() > deadline) throw new Error(`the publisher did not serve within ${PUBLISHER_START_TIMEOUT_MS} ms: ${this.#output.slice(-1_000)}`);
      await new Promise((resolve) => setTimeout(resolve, HEALTH_POLL_INTERVAL_MS));
    }
  }
}

/** The `status` of a `/health` answer, on a connection of its own (closed after); undefined if none came. */
function healthStatus(url: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const request = get(url, { agent: false, timeout: 5_000 }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        try {
          resolve(String((JSON.parse(body) as { status?: unknown }).status));
        } catch {
          resolve(undefined);
        }
      });
      response.on('error', () => resolve(undefined));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(undefined));
  });
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
