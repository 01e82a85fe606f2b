export const benchModes = ['poll', 'sse', 'long-poll', 'websocket'] as const;
export type BenchMode = (typeof benchModes)[number];

/**
 * `fixed`: the study's clients; `smart`: the client library's smart polling (its defaults);
 * `smart-hold`: the same, asking shortly before each element is due and held by the publisher
 * until it comes (`pollHold`).
 */
export const pollStrategyNames = ['fixed', 'smart', 'smart-hold'] as const;
export type PollStrategyName = (typeof pollStrategyNames)[number];

/** What the parent asks a worker process to run. */
export interface WorkerJob {
  readonly mode: BenchMode;
  /** The stream on each publisher instance (or the proxy): client i of the fleet goes to `streamUrls[i mod length]`. */
  readonly streamUrls: readonly string[];
  readonly clients: number;
  /** Index of this worker's first client in the whole fleet (for staggering). */
  readonly firstClient: number;
  readonly totalClients: number;
  readonly rampMs: number;
  readonly pollIntervalMs: number;
  readonly pollStrategy: PollStrategyName;
  readonly sseEncoding: 'identity' | 'gzip';
  /**
   * Gzip SSE clients of the whole fleet that inflate their stream and check the cheap reading
   * against it (`--gzip-verify-sample`); the others find events in the compressed bytes.
   */
  readonly gzipVerifyClients: number;
  /** WebSocket subscribers: `lean` (RFC 6455 over a bare socket) or `ws` (the ws library's client, to check the lean one). */
  readonly websocketClient: 'lean' | 'ws';
  /** Long-pollers: `lean` (`LeanHttpConnection`, a connection each) or `undici` (the worker's pools, as the pollers). */
  readonly httpClient: 'lean' | 'undici';
  /** Source addresses to spread connections over (127.0.0.x). */
  readonly localAddresses: readonly string[];
  /**
   * The source port of each of this worker's clients' first connection (index: the client's
   * number less `firstClient`), free on its address when the fleet started; 0, or none when the
   * fleet does not bind (one address): the kernel chooses (`assignSourcePorts`).
   */
  readonly sourcePorts: readonly number[];
  /** Fraction of latencies kept as raw values for density charts. */
  readonly sampleRate: number;
  readonly requestTimeoutMs: number;
  /** Latencies count from here (the end of the ramp, epoch ms): the ramp is not measured. */
  readonly measureFromMs: number;
}

/** Sent once, when the worker has loaded and listens for its job. */
export interface WorkerReady {
  readonly type: 'ready';
}

/**
 * Whether the workers of a run of `mode` let their clients' next requests go together
 * (`AnswerBurst`, `FleetBurstBarrier`): long-polling, where every client's answer comes in the
 * same burst and its next request follows at once; a poller's waits for its schedule.
 */
export const burstsAcrossFleet = (mode: BenchMode): boolean => mode === 'long-poll';

/**
 * Sent by a long-polling worker when its burst of answers is over (`over`), and when one said
 * over waits no more (`withdrawn`: it goes on, or its requests went at the limit): the parent
 * tells every worker `'burst-go'` once all are over (`FleetBurstBarrier`, `AnswerBurst`).
 */
export interface WorkerBurst {
  readonly type: 'burst';
  readonly state: 'over' | 'withdrawn';
}

/** Sent every second while running. */
export interface WorkerProgress {
  readonly type: 'progress';
  readonly connected: number;
  readonly updates: number;
}

/** Sent once the parent says `stop`. */
export interface WorkerReport {
  readonly type: 'report';
  /** Each measured element: when it was generated (epoch ms) and its latencies (an encoded HDR histogram). */
  readonly elements: Array<{ seq: number; generatedAtMs: number; histogram: string }>;
  readonly samples: Array<[number, number]>;
  /** For each client, when its first answer arrived (undefined if never) and the elements it got. */
  readonly clients: Array<{ connectedAt: number | undefined; seqs: number[] }>;
  /** Requests sent, and answered 304, from the end of the ramp (`measureFromMs`) to the stop. */
  readonly requests: number;
  readonly notModified: number;
  readonly errors: number;
  /** `errors` by cause: an error code, or an answer's status and problem code (`countError`). */
  readonly errorCauses: Readonly<Record<string, number>>;
  readonly timeouts: number;
  readonly reconnects: number;
  /** CPU time (user + system) this worker used from its job to the stop, in seconds. */
  readonly cpuSeconds: number;
  /** Gzip SSE clients only (null otherwise): how their streams were read and checked. */
  readonly gzip: GzipReading | null;
}

/** How a worker's gzip SSE clients read their streams (see docs/bench.md, "Compressed SSE"). */
export interface GzipReading {
  /** Clients that inflated their whole stream and checked the cheap reading against it. */
  readonly verifyClients: number;
  /** Events (or runs of events) of the sample whose text the decoder confirmed. */
  readonly verified: number;
  /** Of the sample's, those whose text differed: must be 0. */
  readonly mismatches: number;
  /** Distinct compressed pieces this worker inflated (once each, for all its clients). */
  readonly piecesInflated: number;
  /** Pieces (events, heartbeats, the preamble) its clients found in the compressed bytes. */
  readonly pieces: number;
  /** Compressed body bytes its clients received (HTTP chunk framing excluded). */
  readonly compressedBytes: number;
}
