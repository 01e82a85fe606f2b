import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

/**
 * A server program a test starts, kills as a crash would and starts again (a private broker or
 * database on its own port): the child process, what it printed, and the wait until it serves.
 */
export class ServerProcess {
  #child: ChildProcess | undefined;
  #output = '';

  constructor(
    /** Names the program in errors. */
    readonly name: string,
  ) {}

  get running(): boolean {
    return this.#child !== undefined;
  }

  /**
   * Starts `binary` with `args` and resolves once `ready()` holds, probed every 10 ms (there is
   * no event for "serving": each probe is one round trip); rejects if it exits first or is not
   * ready within `timeoutMs`, with what it printed.
   */
  async start(binary: string, args: readonly string[], ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    if (this.#child !== undefined) throw new Error(`${this.name} is running`);
    this.#output = '';
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (chunk: string) => (this.#output = (this.#output + chunk).slice(-4_000));
    child.stdout?.setEncoding('utf8').on('data', keep);
    child.stderr?.setEncoding('utf8').on('data', keep);
    this.#child = child;
    let exited = false;
    child.once('exit', () => {
      exited = true;
      if (this.#child === child) this.#child = undefined;
    });
    const deadline = Date.now() + timeoutMs;
    while (!(await ready())) {
      if (exited) throw new Error(`${this.name} exited before serving: ${this.#output}`);
      if (Date.now() > deadline) throw new Error(`${this.name} did not serve within ${timeoutMs} ms: ${this.#output}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Kills the program at once (`SIGKILL`, as a crash would) and resolves once it has exited. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }
}
