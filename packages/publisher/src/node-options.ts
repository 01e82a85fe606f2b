/**
 * Node's options the publisher runs with, given by every launcher of it: its installed command
 * (`bin/rdf-stream-publisher.js`, which starts node again with them where it can), `pnpm start`,
 * the Docker image and the benchmark. See docs/configuration.md, "Node's options".
 *
 * `--no-memory-reducer`: V8's memory reducer collects the whole heap (up to three mark-compacts)
 * a few seconds after the allocation rate falls, to give memory back. A publisher falls quiet
 * between two elements of every stream; with 10 000 subscribers each of those collections took
 * 100–250 ms of CPU while freeing about a tenth of the heap: about a third of the publisher's CPU
 * per delivered update. Off, the heap is collected as it fills, as under load.
 */
export const PUBLISHER_NODE_OPTIONS: readonly string[] = ['--no-memory-reducer'];

/** `--memory-reducer`, `--no-memory-reducer`, `--nomemory_reducer`, …: V8 reads them all. */
const MEMORY_REDUCER_OPTION = /^--(no-?)?memory[-_]reducer$/;

/** Whether V8's memory reducer runs, by node's options (the last one about it decides, as in V8); undefined: none was given (it runs). */
export function memoryReducerOption(execArgv: readonly string[] = process.execArgv): 'on' | 'off' | undefined {
  let state: 'on' | 'off' | undefined;
  for (const option of execArgv) {
    const match = MEMORY_REDUCER_OPTION.exec(option);
    if (match !== null) state = match[1] === undefined ? 'on' : 'off';
  }
  return state;
}

/** `process.execve` (Node ≥ 22.15 on Linux and macOS): this process becomes `file` run with `args`. */
export type Execve = (file: string, args: readonly string[], env?: NodeJS.ProcessEnv) => never;

export interface Restart {
  /** The script node runs (the installed command's file). */
  readonly script: string;
  readonly execPath?: string;
  readonly execArgv?: readonly string[];
  /** The command line's arguments, after the script. */
  readonly args?: readonly string[];
  /** Default `process.execve`; undefined (given so): node cannot replace its process (Node 20). */
  readonly execve?: Execve | undefined;
  readonly platform?: NodeJS.Platform;
}

/**
 * Starts node again in this same process (same pid, same standard streams and environment) with
 * `PUBLISHER_NODE_OPTIONS` before its own options, when it was given none about the memory
 * reducer (an operator's `--memory-reducer` is kept); returns, doing nothing, where it need not
 * or cannot (`process.execve` missing: the publisher then runs with the reducer, and says so at
 * start-up).
 */
export function restartWithPublisherOptions(restart: Restart): void {
  const execve = 'execve' in restart ? restart.execve : (process as { execve?: Execve }).execve;
  const platform = restart.platform ?? process.platform;
  const execArgv = restart.execArgv ?? process.execArgv;
  if (memoryReducerOption(execArgv) !== undefined || typeof execve !== 'function' || platform === 'win32') return;
  const execPath = restart.execPath ?? process.execPath;
  execve(execPath, [execPath, ...PUBLISHER_NODE_OPTIONS, ...execArgv, restart.script, ...(restart.args ?? process.argv.slice(2))]);
}
