import type { Appendfsync } from '../process/private-valkey.js';
import type { GzipVerifySample } from '../fleet/gzip-verify-sample.js';
import type { BenchMode, PollStrategyName } from '../fleet/worker-protocol.js';

/** Everything a benchmark invocation asks for (see `--help` and docs/bench.md). */
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
  /** Gzip SSE clients that inflate their whole stream and check the others' cheap reading (`--gzip-verify-sample`). */
  readonly gzipVerifySample: GzipVerifySample;
  /** WebSocket subscribers: `lean` (RFC 6455 over a bare socket) or `ws` (the ws library's client). */
  readonly websocketClient: 'lean' | 'ws';
  /** Long-pollers: `lean` (HTTP/1.1 over a connection of each client's own) or `undici` (undici's `request` over a pool). */
  readonly httpClient: 'lean' | 'undici';
  readonly proxy: 'none' | 'nginx' | 'varnish';
  readonly clientProcesses: number;
  /** Publisher worker processes (`--workers`) of each instance. */
  readonly serverWorkers: number;
  /** Publisher instances (`--server-instances`), each on its own port from `port`; above 1 they share a Redis log. */
  readonly serverInstances: number;
  /** Where the publishers keep the stream's log: each its own files (`file`), or one Redis/Valkey they share. */
  readonly log: 'file' | 'redis';
  /** The Redis/Valkey of `--log redis`; undefined: the bench starts a Valkey of its own. */
  readonly redisUrl: string | undefined;
  /** `appendfsync` of the bench's own Valkey. */
  readonly redisAppendfsync: Appendfsync;
  /** Client connections per 127.0.0.x source address at most (`--clients-per-address`). */
  readonly clientsPerSourceAddress: number;
  /** Source addresses the fleet may use: 127.0.0.1 to 127.0.0.N (`--source-addresses`). */
  readonly sourceAddresses: number;
  readonly target: string | undefined;
  /**
   * The server the run's fleet subscribes to instead of the publisher (`--peer`): nchan, fed the
   * publisher's elements; undefined: the publisher. Set on the peer's runs only.
   */
  readonly peer?: 'nchan';
  /** Where the publisher writes a V8 CPU profile when it exits (`node --cpu-prof`), or undefined for none. */
  readonly publisherCpuProfDir?: string;
  /** Where each client worker writes a V8 CPU profile when it exits, or undefined for none. */
  readonly clientCpuProfDir?: string;
  readonly outDir: string;
  readonly seed: number;
  readonly port: number;
}

/**
 * Milliseconds between two heartbeats of the bench's publishers (their default), and between two
 * pings of the nchan peer to each subscriber: both keep idle connections alive alike (nchan pings
 * every subscriber; the publisher skips those sent an element since its last heartbeat).
 */
export const HEARTBEAT_MS = 15_000;

/** Turtle bytes per facility and fixed overhead of an element (measured on the demo stream). */
export const BYTES_PER_FACILITY = 393;
export const ELEMENT_OVERHEAD_BYTES = 290;

export const facilitiesForPayload = (payloadBytes: number) =>
  Math.max(1, Math.round((payloadBytes - ELEMENT_OVERHEAD_BYTES) / BYTES_PER_FACILITY));

/** The Van de Vyvere study's fixed polling: a pause of 500 ms after each response (a 5 s stream). */
export const STUDY_POLL_INTERVAL_MS = 500;

/**
 * The fixed pollers' pause when `--poll-interval` is not given: the study's 500 ms, or 0.6 × the
 * stream's interval when that is shorter — Pimentel and Nickerson's Δ = 150 ms for a 4 Hz sensor
 * (250 ms): a poller that pauses longer than the interval misses elements by construction.
 */
export function defaultPollIntervalMs(intervalSeconds: number): number {
  return Math.min(STUDY_POLL_INTERVAL_MS, Math.round(intervalSeconds * 600));
}

