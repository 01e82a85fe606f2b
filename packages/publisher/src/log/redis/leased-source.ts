import type { Logger } from '../../clock-and-logger.js';
import { extractObservations } from '../../model/extract-observations.js';
import type { Observation } from '../../model/observation.js';
import { parseN3 } from '../../model/rdf-input.js';
import type { RenderedElement } from '../../model/stream-element.js';
import type { ElementSource, ObservationSink, SourceHealth } from '../../source/element-source.js';
import { streamKeys } from './redis-keys.js';
import { type LeaseCommands, SourceLease } from './source-lease.js';

/**
 * The kinds of source that generate elements, and so must run on one instance of a shared log at
 * a time. Ingest runs on every instance (a POST may reach any of them), as does a manual source
 * (its program pushes to the instance it embeds).
 */
const GENERATED_SOURCE_KINDS: ReadonlySet<string> = new Set(['simulator', 'replay', 'web-api', 'mqtt']);

/** True when `source` generates elements itself: with a shared log, it runs under a lease (`LeasedSource`). */
export function runsOnOneInstance(source: ElementSource): boolean {
  return GENERATED_SOURCE_KINDS.has(source.kind);
}

/** What `leaseIfGenerated` needs besides the source: the shared log's connection and settings. */
export interface SourceLeaseSettings {
  /** A connection that runs no blocking reads (see `LeaseCommands`). */
  readonly redis: LeaseCommands;
  /** `redisKeyPrefix`. */
  readonly keyPrefix: string;
  /** `sourceLeaseMs`. */
  readonly leaseMs: number;
  readonly streamId: string;
  readonly latestElement: () => Promise<RenderedElement | undefined>;
  readonly logger: Logger;
}

/**
 * A stream's source as a shared log runs it: `source` itself when every instance runs it (ingest,
 * manual), else a `LeasedSource` over the stream's lease (`streamKeys(keyPrefix, streamId).lease`),
 * whose `lease.token` is the fence of the stream's appends.
 */
export function leaseIfGenerated(source: ElementSource, settings: SourceLeaseSettings): ElementSource {
  if (!runsOnOneInstance(source)) return source;
  const { redis, keyPrefix, leaseMs, streamId, latestElement, logger } = settings;
  const lease = new SourceLease({ redis, key: streamKeys(keyPrefix, streamId).lease, streamId, leaseMs, logger });
  return new LeasedSource({ source, lease, latestElement, streamId, logger });
}

export interface LeasedSourceOptions {
  /** The real source; started when the lease is acquired, stopped when it is lost. */
  readonly source: ElementSource;
  /** The stream's lease, not started: `start` starts it, `stop` releases it. */
  readonly lease: SourceLease;
  /**
   * The newest element of the shared log, read when this instance takes the source over: a
   * replay continues after it. Read it from Redis, not from what this instance has followed so far.
   */
  readonly latestElement: () => Promise<RenderedElement | undefined>;
  readonly streamId: string;
  readonly logger: Logger;
}

/**
 * A generated source run by whichever instance holds the stream's lease: it starts the real
 * source when the lease is acquired (after telling it where the log ends, see
 * `ElementSource.resumeAfter`) and stops it when the lease is lost, and drops what the source
 * still produces once the lease is gone. `health()` says whether this instance runs it
 * (`leaseHolder`).
 */
export class LeasedSource implements ElementSource {
  readonly kind: string;
  readonly expectedIntervalMs: number | null;
  readonly #options: LeasedSourceOptions;
  #sink: ObservationSink | undefined;
  /** The current run of the real source, from acquisition to loss: a stale run's callbacks find it changed. */
  #run: object | undefined;
  /** The real source's last `stop`, awaited before it starts again. */
  #stopping: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(options: LeasedSourceOptions) {
    this.#options = options;
    this.kind = options.source.kind;
    this.expectedIntervalMs = options.source.expectedIntervalMs;
    options.lease.onAcquired(() =>
      this.#takeOver().catch((error: unknown) => options.logger.error({ stream: options.streamId, err: error }, 'the source could not start on this instance')),
    );
    options.lease.onLost(() => this.#standDown());
  }

  /** The stream's lease: its `token` fences the stream's appends. */
  get lease(): SourceLease {
    return this.#options.lease;
  }

  /** Competes for the lease; the real source starts once it is acquired (not before this resolves). */
  start(sink: ObservationSink): void {
    if (this.#sink !== undefined || this.#stopped) return;
    this.#sink = sink;
    this.#options.lease.start();
  }

  /** Stops the real source, then releases the lease, so that another instance takes over at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#run = undefined;
    await this.#stopping;
    await this.#options.source.stop();
    await this.#options.lease.stop();
  }

  health(): SourceHealth {
    const inner = this.#options.source.health();
    if (this.#run !== undefined) return { ...inner, leaseHolder: true };
    const { lease } = this.#options;
    if (this.#sink === undefined || this.#stopped) return { ...inner, leaseHolder: false };
    const failure = lease.lastError;
    if (failure !== undefined) {
      return { state: 'degraded', detail: `the source's lease cannot be acquired: ${failure.message}`, recordsRejected: inner.recordsRejected, leaseHolder: false };
    }
    // Another instance runs the source (or the first attempt is still out): this one serves the log.
    return { state: lease.answered ? 'ok' : 'starting', recordsRejected: inner.recordsRejected, leaseHolder: false };
  }

  async #takeOver(): Promise<void> {
    // Acquired while `stop` waits for the real source: the release follows.
    if (this.#stopped) return;
    const run = {};
    this.#run = run;
    const { source, logger, streamId } = this.#options;
    await this.#stopping;
    let latest: RenderedElement | undefined;
    try {
      latest = await this.#options.latestElement();
    } catch (error) {
      logger.warn({ stream: streamId, err: error }, 'the log could not be read: the source starts from its beginning');
    }
    if (this.#run !== run) return;
    if (latest !== undefined && source.resumeAfter !== undefined) {
      try {
        source.resumeAfter(observationsOf(latest));
      } catch (error) {
        logger.warn({ stream: streamId, err: error, seq: latest.seq }, "the log's latest element could not be read: the source starts from its beginning");
      }
    }
    const sink = this.#sink!;
    logger.info({ stream: streamId, kind: source.kind, afterSeq: latest?.seq ?? 0 }, 'source started on this instance');
    source.start((observations, generatedAt) => {
      // What a stopping source still produces after the loss is not this instance's to publish.
      if (this.#run === run && this.#options.lease.token !== undefined) sink(observations, generatedAt);
    });
  }

  #standDown(): void {
    if (this.#run === undefined) return;
    this.#run = undefined;
    const { source, logger, streamId } = this.#options;
    logger.info({ stream: streamId, kind: source.kind }, 'source stopped on this instance');
    this.#stopping = Promise.resolve(source.stop()).catch((error: unknown) => {
      logger.warn({ stream: streamId, err: error }, 'source did not stop cleanly');
    });
  }
}

/** The observations of an element, read back from its N-Triples document. */
function observationsOf(element: RenderedElement): Observation[] {
  return extractObservations(parseN3(element.documents.ntriples.toString('utf8'), 'ntriples')).observations;
}
