import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { TransportStats } from '@rdf-stream/client';

export interface PollFleetOptions {
  readonly latestUrl: string;
  readonly pollers: number;
  readonly pollIntervalMs: number;
}

/** What the fleet's process says: once started, every second, and once stopped. */
export interface PollFleetMessage {
  readonly type: 'started' | 'stats' | 'stopped';
  readonly stats: TransportStats;
}

/**
 * A `PollFleet` in a process of its own: thousands of pollers beside thousands of SSE
 * subscribers are more than one event loop can drive, and a starved client fleet measures
 * itself, not the publisher. (A process, not a worker thread: tsx's loader hooks and worker
 * threads deadlock on Node 20.) `stats` follows the fleet's counters, every second and once
 * more after `stop`.
 */
export class PollFleetProcess {
  stats: TransportStats = { requests: 0, notModified: 0, elements: 0, reconnects: 0 };
  #child: ChildProcess | undefined;

  constructor(readonly options: PollFleetOptions) {}

  /** Starts the process; resolves once every poller runs. */
  async start(): Promise<void> {
    const child = fork(fileURLToPath(new URL('./poll-fleet-worker.ts', import.meta.url)), [JSON.stringify(this.options)], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.#child = child;
    await new Promise<void>((resolve, reject) => {
      child.on('message', (message: PollFleetMessage) => {
        this.stats = message.stats;
        if (message.type === 'started') resolve();
      });
      child.once('exit', (code) => reject(new Error(`the poll fleet exited (${code}) before it started`)));
    });
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null) return;
    this.#child = undefined;
    const exited = once(child, 'exit');
    child.send('stop');
    await exited;
  }
}
