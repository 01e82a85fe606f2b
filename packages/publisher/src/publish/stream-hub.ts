import type { EventLog } from '../log/event-log.js';
import type { Quad } from '@rdfjs/types';
import { elementQuads, elementQuadsFromTriples, type Observation } from '../model/observation.js';
import { elementGraphIri, type StreamElement } from '../model/stream-element.js';
import { compressOnce, type EncodedBodies, type Encoding, encodings } from '../render/compress.js';
import { entityTag } from '../render/etag.js';
import { type FormatName, formatNames } from '../render/formats.js';
import type { JsonLdWriter } from '../render/jsonld-writer.js';
import { type LoggedElement, renderElement } from '../render/render-element.js';
import { sseFrame } from '../render/sse-frame.js';
import type { ElementSource } from '../source/element-source.js';
import { Broadcaster } from './broadcaster.js';
import { LongPollWaiters } from './long-poll-waiters.js';
import { gapData, type ResumePlan } from './resume.js';
import type { StreamMetrics } from './stream-metrics.js';
import { Subscriber, type SubscriberSink } from './subscriber.js';

export interface StreamDefinition {
  readonly id: string;
  readonly title: string;
  /** `{base}/streams/{id}` */
  readonly iri: string;
  /** Milliseconds between elements, or null for an irregular stream. */
  readonly expectedIntervalMs: number | null;
  readonly description?: string;
  /** IRI of the licence. */
  readonly license?: string;
}

/** The latest element in every format and content coding, with its validators. */
export interface LatestElement {
  readonly seq: number;
  readonly generatedAt: Date;
  readonly graph: string;
  readonly bodies: Readonly<Record<FormatName, EncodedBodies>>;
  readonly etags: Readonly<Record<FormatName, Readonly<Record<Encoding, string>>>>;
  /** False if compression failed: only the identity coding may be served. */
  readonly compressed: boolean;
}

/** A logged element whose `/latest` bodies are still to be compressed. */
interface PendingLatest {
  readonly seq: number;
  readonly generatedAt: Date;
  readonly graph: string;
  readonly bodies: Readonly<Record<FormatName, Buffer>>;
}

export interface StreamHubOptions {
  readonly baseUrl: string;
  readonly definition: StreamDefinition;
  readonly source: ElementSource;
  readonly log: EventLog<LoggedElement>;
  readonly jsonLd: JsonLdWriter;
  readonly metrics: StreamMetrics;
  readonly limits: {
    readonly broadcastBatchSize: number;
    readonly maxSubscribers: number;
    readonly maxSubscriberQueueBytes: number;
    readonly maxLongPollWaiters: number;
    readonly heartbeatMs: number;
  };
  readonly onError: (error: unknown) => void;
  /**
   * Subscribers counted against `maxSubscribers`: the process's, all streams together (each holds
   * a file descriptor). Defaults to this hub's own.
   */
  readonly subscribersInProcess?: () => number;
}

/** Thrown by `subscribe` when `maxSubscribers` are already connected. */
export class TooManySubscribersError extends Error {
  override readonly name = 'TooManySubscribersError';
}

/**
 * One stream's pipeline: source → element quads → render once → log → latest, long-poll
 * waiters and SSE broadcast. Publishing is serialised, so sequence numbers follow the order in
 * which the source produced observations.
 */
export class StreamHub {
  readonly definition: StreamDefinition;
  readonly log: EventLog<LoggedElement>;
  readonly broadcaster: Broadcaster;
  readonly waiters: LongPollWaiters;
  readonly #options: StreamHubOptions;
  #latest: LatestElement | undefined;
  /** The newest logged element whose bodies `/latest` does not serve yet. */
  #pendingLatest: PendingLatest | undefined;
  #refreshing = false;
  #latestWaiters: Array<{ readonly seq: number; readonly resolve: () => void }> = [];
  #chain: Promise<unknown> = Promise.resolve();
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(options: StreamHubOptions) {
    this.#options = options;
    this.definition = options.definition;
    this.log = options.log;
    this.broadcaster = new Broadcaster(options.log, {
      streamId: options.definition.id,
      batchSize: options.limits.broadcastBatchSize,
      metrics: options.metrics,
    });
    this.waiters = new LongPollWaiters(options.limits.maxLongPollWaiters, (count) =>
      options.metrics.longPollWaitersChanged(options.definition.id, count),
    );
  }

  get latest(): LatestElement | undefined {
    return this.#latest;
  }

  get source(): ElementSource {
    return this.#options.source;
  }

  /**
   * Starts the source and the heartbeat. Resolves once the first element is published if the
   * source produces one at once (the simulator, a replay), else at once (web APIs, MQTT, ingest).
   */
  async start(): Promise<void> {
    let first: Promise<unknown> | undefined;
    this.#options.source.start((observations, generatedAt) => {
      const published = this.publish(observations, generatedAt);
      first ??= published;
    });
    this.#heartbeat = setInterval(() => {
      this.broadcaster.heartbeat().catch(this.#options.onError);
    }, this.#options.limits.heartbeatMs);
    this.#heartbeat.unref();
    await first;
  }

  async stop(): Promise<void> {
    clearInterval(this.#heartbeat);
    await this.#options.source.stop();
  }

  /**
   * Appends one element built from `observations`. Resolves with the logged element once
   * `/latest` serves it or a newer one (its broadcast starts before, as soon as it is rendered);
   * rejects, and changes nothing, if rendering fails. `seq`, when given (cluster workers), must continue the log.
   */
  publish(observations: readonly Observation[], generatedAt: Date, seq?: number): Promise<LoggedElement> {
    return this.#enqueue((graph) => elementQuads(graph, generatedAt, observations), generatedAt, seq);
  }

  /**
   * Appends one element holding `triples` as given (ingest): they are moved into the element's
   * graph. Same guarantees as `publish`; the caller has validated them.
   */
  publishTriples(triples: readonly Quad[], generatedAt: Date): Promise<LoggedElement> {
    return this.#enqueue((graph) => elementQuadsFromTriples(graph, generatedAt, triples), generatedAt);
  }

  #enqueue(quadsOf: (graph: string) => Quad[], generatedAt: Date, seq?: number): Promise<LoggedElement> {
    const logged = this.#chain.then(() => this.#publishNow(quadsOf, generatedAt, seq));
    this.#chain = logged.catch(this.#options.onError);
    return logged.then((element) => this.#latestReached(element.seq).then(() => element));
  }

  /**
   * Renders and logs one element and starts its broadcast. Only this is serialised: the bodies
   * of `/latest` are compressed afterwards, off the chain (see `#refreshLatest`).
   */
  async #publishNow(quadsOf: (graph: string) => Quad[], generatedAt: Date, givenSeq?: number): Promise<LoggedElement> {
    const { baseUrl, definition, jsonLd, metrics } = this.#options;
    // A cluster worker publishes the primary's numbering; it may join after the first element.
    if (givenSeq !== undefined && givenSeq !== this.log.nextSeq) {
      if (this.log.latestSeq !== 0) throw new RangeError(`Expected sequence number ${this.log.nextSeq}, got ${givenSeq}`);
      this.log.startAt(givenSeq);
    }
    const seq = this.log.nextSeq;
    const graph = elementGraphIri(baseUrl, definition.id, seq);
    const element: StreamElement = {
      streamId: definition.id,
      seq,
      graph,
      generatedAt,
      quads: quadsOf(graph),
    };
    const { bodies, ...logged } = renderElement(element, jsonLd);
    // Persist, then dispatch: SSE subscribers get the element as soon as it is rendered;
    // compressing the bodies of /latest (milliseconds on the thread pool) does not delay them.
    this.log.append(logged);
    metrics.elementPublished(definition.id);
    this.broadcaster.notify().catch(this.#options.onError);
    this.#pendingLatest = { seq, generatedAt, graph, bodies };
    if (!this.#refreshing) void this.#refreshLatest();
    return logged;
  }

  /**
   * Compresses the newest logged element and makes it the latest, until none is pending. When
   * elements arrive faster than they compress (ingest bursts), the ones superseded meanwhile
   * are never compressed: `/latest` only ever serves the newest.
   */
  async #refreshLatest(): Promise<void> {
    this.#refreshing = true;
    try {
      for (let next = this.#pendingLatest; next !== undefined; next = this.#pendingLatest) {
        this.#pendingLatest = undefined;
        this.#latest = await this.#compressed(next);
        this.waiters.release('element');
        for (const waiter of this.#latestWaiters.splice(0)) {
          if (waiter.seq <= next.seq) waiter.resolve();
          else this.#latestWaiters.push(waiter);
        }
      }
    } finally {
      this.#refreshing = false;
    }
  }

  async #compressed(element: PendingLatest): Promise<LatestElement> {
    const { seq, generatedAt, graph, bodies } = element;
    let compressed = true;
    const encoded = await Promise.all(
      formatNames.map((format) =>
        compressOnce(bodies[format]).catch((error: unknown) => {
          // Practically only out of memory; the element is logged already, so serve it uncompressed.
          compressed = false;
          this.#options.onError(error);
          return Object.freeze({ br: bodies[format], gzip: bodies[format], identity: bodies[format] });
        }),
      ),
    );
    const latestBodies = {} as Record<FormatName, EncodedBodies>;
    const etags = {} as Record<FormatName, Record<Encoding, string>>;
    formatNames.forEach((format, index) => {
      latestBodies[format] = encoded[index] as EncodedBodies;
      etags[format] = Object.fromEntries(
        encodings.map((encoding) => [encoding, entityTag(this.log.epoch, seq, format, encoding)]),
      ) as Record<Encoding, string>;
    });
    return { seq, generatedAt, graph, bodies: latestBodies, etags, compressed };
  }

  /** Resolves once `/latest` serves element `seq` or a newer one. */
  #latestReached(seq: number): Promise<void> {
    if (this.#latest !== undefined && this.#latest.seq >= seq) return Promise.resolve();
    return new Promise((resolve) => this.#latestWaiters.push({ seq, resolve }));
  }

  /** True when `maxSubscribers` are connected to this process: a new subscriber is refused. */
  get subscribersFull(): boolean {
    const count = this.#options.subscribersInProcess?.() ?? this.broadcaster.size;
    return count >= this.#options.limits.maxSubscribers;
  }

  /**
   * Registers an SSE subscriber whose response headers are already written, sends what `plan`
   * asks to replay (respecting backpressure), then makes it live. Throws
   * `TooManySubscribersError` before writing anything if the limit is reached.
   */
  subscribe(sink: SubscriberSink, format: FormatName, plan: ResumePlan): Subscriber {
    const { maxSubscribers, maxSubscriberQueueBytes } = this.#options.limits;
    if (this.subscribersFull) {
      throw new TooManySubscribersError(`${maxSubscribers} subscribers are already connected`);
    }
    const fromSeq = plan.kind === 'live' ? this.log.nextSeq : plan.fromSeq;
    const subscriber = new Subscriber(sink, format, fromSeq - 1, maxSubscriberQueueBytes);
    this.broadcaster.add(subscriber);
    this.#catchUp(subscriber).catch(this.#options.onError);
    return subscriber;
  }

  /** Sends retained elements after `lastSentSeq` until none is left, then goes live (same turn). */
  async #catchUp(subscriber: Subscriber): Promise<void> {
    while (!subscriber.closed) {
      const seq = subscriber.lastSentSeq + 1;
      if (seq > this.log.latestSeq) {
        subscriber.live = true;
        return;
      }
      const element = this.log.get(seq);
      if (element === undefined) {
        const oldest = this.log.oldestSeq ?? this.log.nextSeq;
        subscriber.sink.write(sseFrame({ event: 'gap', data: gapData(subscriber.lastSentSeq, oldest, 'expired') }));
        subscriber.lastSentSeq = oldest - 1;
        continue;
      }
      if (!subscriber.send(element.frames[subscriber.format], seq) && !(await subscriber.drained())) return;
    }
  }
}

