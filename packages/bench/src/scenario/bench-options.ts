import type { BenchMode } from '../fleet/worker-protocol.js';

/** Everything a benchmark invocation asks for (see `--help` and docs/bench.md). */
/**
 * `fixed`: the study's clients; `smart`: the client library's smart polling (its defaults);
 * `smart-hold`: the same, asking shortly before each element is due and held by the publisher
 * until it comes (`pollHold`).
 */
export const pollStrategyNames = ['fixed', 'smart', 'smart-hold'] as const;
export type PollStrategyName = (typeof pollStrategyNames)[number];

export interface BenchOptions {
  readonly modes: readonly BenchMode[];
  readonly clientCounts: readonly number[];
  readonly durationSeconds: number;
  readonly rampSeconds: number;
  readonly intervalSeconds: number;
  /** Facilities per element: 13 give the study's ~5.2 kB Turtle document. */
  readonly facilities: number;
  readonly pollIntervalMs: number;
  readonly pollStrategy: PollStrategyName;
  /** What SSE clients ask for: identity (the study), or gzip (as browsers get it). */
  readonly sseEncoding: 'identity' | 'gzip';
  readonly proxy: 'none' | 'nginx' | 'varnish';
  readonly clientProcesses: number;
  /** Publisher worker processes (`--workers`). */
  readonly serverWorkers: number;
  readonly target: string | undefined;
  readonly outDir: string;
  readonly seed: number;
  readonly port: number;
}

/** Turtle bytes per facility and fixed overhead of an element (measured on the demo stream). */
export const BYTES_PER_FACILITY = 393;
export const ELEMENT_OVERHEAD_BYTES = 290;

export const facilitiesForPayload = (payloadBytes: number) =>
  Math.max(1, Math.round((payloadBytes - ELEMENT_OVERHEAD_BYTES) / BYTES_PER_FACILITY));

/** Connections per source address before spreading over the next 127.0.0.x (of ~28 000 ports). */
export const CONNECTIONS_PER_SOURCE_ADDRESS = 20_000;

export function sourceAddresses(clients: number): string[] {
  const count = Math.max(1, Math.ceil(clients / CONNECTIONS_PER_SOURCE_ADDRESS));
  return Array.from({ length: count }, (_, index) => `127.0.0.${index + 1}`);
}
