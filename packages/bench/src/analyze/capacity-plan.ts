import type { ElementBytes } from '../collect/element-bytes.js';
import { MAL_SECONDS } from './mal.js';

/** What the plan is computed from: this run's own measurements. */
export interface CapacityInputs {
  /**
   * Server CPU per delivered update (µs), by push transport, from the largest run of each; SSE
   * by encoding (`sse-gzip`: the largest run with `--sse-encoding gzip`).
   */
  readonly cpuMicrosPerUpdate: { readonly sse: number | null; readonly 'sse-gzip': number | null; readonly 'long-poll': number | null; readonly websocket: number | null };
  /** `/latest` requests per second the publisher answered alone (the throughput phase); null if not run. */
  readonly pollRequestsPerSecond: number | null;
  readonly bytes: ElementBytes | null;
  /**
   * The push transports this invocation ran (`sse` for identity SSE runs, `sse-gzip` for gzip
   * ones): a cost missing for a transport it ran is a run that measured none; for one it did not
   * run, the plan says which run to add.
   */
  readonly ran?: readonly PushTransport[];
}

export type PushTransport = 'sse' | 'sse-gzip' | 'websocket' | 'long-poll';

export interface CapacityRow {
  /** `sse` (identity), `sse-gzip`, `websocket` (uncompressed), `long-poll`, or `poll` at a maximum acceptable latency. */
  readonly transport: 'sse' | 'sse-gzip' | 'websocket' | 'long-poll' | 'poll';
  readonly malSeconds: number | null;
  readonly clients: number;
  readonly intervalSeconds: number;
  /** Cores the publisher needs (null: not measured in this run; `coresNote` says why and what to run). */
  readonly cores: number | null;
  /**
   * Why `cores` is null and which run to add to measure it, or where the cost came from when it
   * is not the transport's own run (sse-gzip without a gzip run); null when it is its own.
   */
  readonly coresNote: string | null;
  /** Network it sends (Gbit/s), bodies and headers (identity, but for `sse-gzip`). */
  readonly gbitPerSecond: number | null;
}

export interface CapacityPlan {
  readonly inputs: CapacityInputs;
  readonly assumptions: readonly string[];
  readonly rows: readonly CapacityRow[];
}

export const PLAN_CLIENTS = [100_000, 1_000_000] as const;
export const PLAN_INTERVAL_SECONDS = [1, 5] as const;

/** The options of the run that measures each push transport's CPU per update. */
const RUN_OF: Record<PushTransport, string> = {
  sse: '--mode sse',
  'sse-gzip': '--mode sse --sse-encoding gzip',
  websocket: '--mode websocket',
  'long-poll': '--mode long-poll',
};

const MISSING_THROUGHPUT = 'add the throughput phase (--throughput-duration 30)';

/** Why a push transport has no cost: its run measured none, or the invocation had no run of it (then which to add). */
function missingCost(transport: PushTransport, ran: readonly PushTransport[] | undefined): string {
  if (ran?.includes(transport)) return `its ${RUN_OF[transport]} run delivered no measured update`;
  // One invocation has one --sse-encoding: an identity run beside gzip ones is another invocation.
  if (transport === 'sse' && ran?.includes('sse-gzip')) return 'add a --mode sse run (identity, another invocation)';
  return `add a ${RUN_OF[transport]} run`;
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;
const gbit = (bytesPerSecond: number) => round((bytesPerSecond * 8) / 1e9, 3);

/**
 * Cores and bandwidth to serve 100 000 and 1 000 000 clients of a stream with an element every
 * 1 s or 5 s, by SSE, WebSocket, long-poll and polling at each MAL of formula (1), from the CPU per update,
 * requests per second and bytes this run measured. Linear in the number of clients by
 * construction: see `assumptions`, which the report prints beside the table.
 */
export function capacityPlan(inputs: CapacityInputs): CapacityPlan {
  const { cpuMicrosPerUpdate, pollRequestsPerSecond, bytes } = inputs;
  const rows: CapacityRow[] = [];
  for (const clients of PLAN_CLIENTS) {
    for (const intervalSeconds of PLAN_INTERVAL_SECONDS) {
      const updatesPerSecond = clients / intervalSeconds;
      const push = (transport: PushTransport, bytesPerUpdate: number | null): CapacityRow => {
        // Without a gzip run, the identity run's cost: a write costs per write, not per byte, and
        // each event is compressed once, not per subscriber (see the assumptions).
        const own = cpuMicrosPerUpdate[transport];
        const borrowed = own === null && transport === 'sse-gzip' ? cpuMicrosPerUpdate.sse : null;
        const cpu = own ?? borrowed;
        return {
          transport,
          malSeconds: null,
          clients,
          intervalSeconds,
          cores: cpu === null ? null : round((updatesPerSecond * cpu) / 1e6, 1),
          coresNote: own !== null ? null : borrowed !== null ? 'the identity SSE run’s CPU per update' : missingCost(transport, inputs.ran),
          gbitPerSecond: bytesPerUpdate === null ? null : gbit(updatesPerSecond * bytesPerUpdate),
        };
      };
      rows.push(push('sse', bytes?.sseEvent ?? null));
      rows.push(push('sse-gzip', bytes?.sseEventGzip ?? null));
      rows.push(push('websocket', bytes?.websocketFrame ?? null));
      // A long-poll answer is a whole response: headers and body.
      rows.push(push('long-poll', bytes === null ? null : bytes.headers200 + bytes.identity));
      for (const malSeconds of MAL_SECONDS) {
        // Formula (1): one request per client and MAL; a new element since the client's last
        // request comes as a 200 with the body, otherwise the answer is a 304.
        const requestsPerSecond = clients / malSeconds;
        const fullPerSecond = clients * Math.min(1 / malSeconds, 1 / intervalSeconds);
        rows.push({
          transport: 'poll',
          malSeconds,
          clients,
          intervalSeconds,
          cores: pollRequestsPerSecond === null || pollRequestsPerSecond <= 0 ? null : round(requestsPerSecond / pollRequestsPerSecond, 1),
          coresNote: pollRequestsPerSecond === null || pollRequestsPerSecond <= 0 ? MISSING_THROUGHPUT : null,
          gbitPerSecond:
            bytes === null ? null : gbit(fullPerSecond * (bytes.headers200 + bytes.identity) + (requestsPerSecond - fullPerSecond) * bytes.response304),
        });
      }
    }
  }
  return {
    inputs,
    assumptions: [
      'CPU grows linearly with delivered updates (SSE, long-poll) or requests (polling), at the cost per update or request measured in this run, on cores like this machine’s; the largest run of each mode gives its cost.',
      'Polling: requests per second per core are the throughput phase’s (the publisher is one process, so it used at most one core); each client polls once per MAL (formula 1), and only a request after a new element carries the body.',
      'Bytes are identity (no compression), but for sse-gzip, and count HTTP headers, SSE and WebSocket framing but not TCP/IP overhead; one connection per client; a cache in front of the publisher (nginx, Varnish) or more processes are not counted.',
      'sse-gzip: an event as a gzip subscriber gets it, read off the wire (each event is compressed once for every subscriber); its CPU per update is that of an --sse-encoding gzip run, or else of the identity run (a socket write costs per write rather than per byte).',
    ],
    rows,
  };
}
