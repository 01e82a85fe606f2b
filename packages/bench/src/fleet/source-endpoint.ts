/** The local end a connection is opened from, as `net.connect` and `http.request` take it. */
export interface SourceOptions {
  readonly localAddress: string;
  readonly localPort?: number;
}

/**
 * Where one client's connections come from: its source address, and the port the bench planned
 * for its first connection (`WorkerJob.sourcePorts`). A connection bound to an address with port
 * 0 makes the kernel search that address's ports for one no socket holds, sockets in TIME_WAIT
 * included: with the thousands a run before leaves there, opening a fleet's connections took a
 * worker 90 % of a core in the kernel for seconds, and the ramp stalled (docs/bench.md). A port
 * named in `bind()` costs one lookup. Reconnections let the kernel choose: the port of the
 * connection just closed may still be in TIME_WAIT on this side, and they are few.
 */
export class SourceEndpoint {
  #port: number | undefined;

  /** `port` 0: the kernel chooses from the first connection on. */
  constructor(
    readonly address: string,
    port: number,
  ) {
    this.#port = port === 0 ? undefined : port;
  }

  /** The options of the next connection: the planned port the first time only. */
  take(): SourceOptions {
    const port = this.#port;
    this.#port = undefined;
    return port === undefined ? { localAddress: this.address } : { localAddress: this.address, localPort: port };
  }
}

/**
 * Whether `error` says that the port planned for a connection opened with `options` was taken
 * since the plan (by a connection of the fleet from a port the kernel chose): `connect` fails
 * with `EADDRINUSE` or `EADDRNOTAVAIL`. The bench's own doing, not the server's: the client opens
 * the connection again from a port the kernel chooses, and no error is counted.
 */
export function plannedPortTaken(error: NodeJS.ErrnoException, options: SourceOptions | undefined): boolean {
  return options?.localPort !== undefined && (error.code === 'EADDRINUSE' || error.code === 'EADDRNOTAVAIL');
}
