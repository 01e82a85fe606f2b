import type { Quad } from '@rdfjs/types';
import type { EventLog } from '../log/event-log.js';
import type { Observation } from '../model/observation.js';
import type { JsonLdWriter } from '../render/jsonld-writer.js';
import type { EventStreamEncoder } from '../render/event-stream-encoder.js';
import type { IdempotencyStamp, LoggedElement } from '../render/render-element.js';
import type { ElementSource } from '../source/element-source.js';
import type { Broadcaster } from './sse/broadcaster.js';
import { ElementWriter } from './element-writer.js';
import { type LatestElement, LatestElementCache } from './latest/latest-element-cache.js';
import { LongPollWaiters } from './latest/long-poll-waiters.js';
import { ResourceIndex } from './resources/resource-index.js';
import type { ResumePlan } from './sse/resume.js';
import type { StreamMetrics } from './stream-metrics.js';
import type { Feed } from './sse/element-patches.js';
import type { Subscriber, SubscriberSink } from './sse/subscriber.js';
import { type SubscriberLimits, SubscriberRegistry } from './sse/subscriber-registry.js';
import type { WebSocketSink, WebSocketSubscriber } from './sse/websocket-subscriber.js';

export { TooManySubscribersError } from './sse/subscriber-registry.js';
export type { LatestElement } from './latest/latest-element-cache.js';

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
  /** The log's retention (see `RetentionPolicy`), announced by the descriptor and the history. */
  readonly retainedElements: number;
  /** Age limit of the log in seconds; 0: none. */
  readonly retainedSeconds: number;
}

export interface StreamHubOptions {
  readonly baseUrl: string;
  readonly definition: StreamDefinition;
  readonly source: ElementSource;
  readonly log: EventLog;
  readonly jsonLd: JsonLdWriter;
  readonly metrics: StreamMetrics;
  readonly limits: SubscriberLimits & {
    readonly maxLongPollWaiters: number;
    /** Sensors and features of interest described at once (count; see `ResourceIndex`). */
    readonly maxDescribedResources: number;
  };
  readonly onError: (error: unknown) => void;
  /** Subscribers counted against `maxSubscribers`: the process's, all streams together. */
  readonly subscribersInProcess?: () => number;
  /**
   * `writer` (default): this process numbers and appends the stream's elements from its source.
   * `replica` (a cluster worker): elements arrive through `replicate`, durable and compressed by
   * the writer; the source only stands for the writer's in `/health`.
   */
  readonly role?: 'writer' | 'replica';
  /**
   * Milliseconds after which a push connection ended by a new life of the log (see
   * `EventLog.onEpochChanged`) is told to come back, drawn per connection so that they spread.
   */
  readonly reconnectDelayMs?: () => number;
}

/**
 * One stream, built on its log: the source feeds the writer (numbering and append); once an
 * element is durable the log announces it, and the latest-element cache (`/latest`, long-poll)
 * and the subscriber registry (SSE catch-up and broadcast) read it from there.
 */
export class StreamHub {
  readonly definition: StreamDefinition;
  readonly log: EventLog;
  readonly waiters: LongPollWaiters;
  readonly latestCache: LatestElementCache;
  readonly subscribers: SubscriberRegistry;
  /** The sensors and features of interest the stream mints, described from the elements `/latest` serves. */
  readonly resources: ResourceIndex;
  readonly #options: StreamHubOptions;
  readonly #writer: ElementWriter | undefined;

  constructor(options: StreamHubOptions) {
    const { definition, log, metrics, limits, onError } = options;
    this.#options = options;
    this.definition = definition;
    this.log = log;
    this.waiters = new LongPollWaiters(limits.maxLongPollWaiters, (count) => metrics.longPollWaitersChanged(definition.id, count), {
      limits: {
        maxQueueBytes: limits.maxSubscriberQueueBytes,
        stallTimeoutMs: limits.subscriberStallTimeoutMs,
        progressCheckMs: limits.subscriberProgressCheckMs,
        sendQueueReader: limits.subscriberSendQueueReader,
      },
      onEvicted: (reason) => metrics.subscriberEvicted(definition.id, reason),
    }, { batchSize: limits.broadcastBatchSize });
    this.latestCache = new LatestElementCache(log.epoch, this.waiters, onError);
    this.resources = new ResourceIndex(definition.iri, limits.maxDescribedResources);
    // The element the log held at start-up was generated before it: only later ones count.
    let restoredSeq = log.latest()?.seq ?? 0;
    this.latestCache.onServed((latest) => {
      if (latest.seq > restoredSeq) metrics.elementServed(definition.id, Math.max(0, Date.now() - latest.generatedAt.getTime()) / 1000);
      try {
        this.resources.index({ ...latest, ntriples: latest.bodies.ntriples.identity });
      } catch (error) {
        onError(error);
      }
    });
    this.subscribers = new SubscriberRegistry({
      streamId: definition.id,
      log,
      metrics,
      limits,
      onError,
      ...(options.subscribersInProcess === undefined ? {} : { subscribersInProcess: options.subscribersInProcess }),
    });
    this.#writer =
      options.role === 'replica'
        ? undefined
        : new ElementWriter({
            baseUrl: options.baseUrl,
            streamId: definition.id,
            log,
            jsonLd: options.jsonLd,
            metrics,
            // /latest compresses an element while its append is made durable.
            onRendered: (element) => this.latestCache.prepare(element),
          });
    // Persist, then dispatch: readers hear of an element only once the log has made it durable.
    // A replica's /latest comes compressed from the writer (`replicateLatest`).
    const writer = options.role !== 'replica';
    log.onAppended(() => {
      this.subscribers.broadcaster.notify().catch(onError);
      const latest = log.latest();
      if (writer && latest !== undefined) this.latestCache.offer(latest);
    });
    // A shared log's server lost it: subscribers come back with their old ids and get the
    // explicit epoch gap; /latest and long-polls start over with the new life's elements.
    log.onEpochChanged?.((epoch) => {
      restoredSeq = 0;
      this.latestCache.restart(epoch);
      this.waiters.release('timeout').catch(onError);
      this.subscribers.broadcaster.restart(options.reconnectDelayMs ?? (() => 0)).catch(onError);
    });
    const restored = log.latest();
    if (writer && restored !== undefined) this.latestCache.offer(restored);
  }

  get latest(): LatestElement | undefined {
    return this.latestCache.current;
  }

  get source(): ElementSource {
    return this.#options.source;
  }

  get broadcaster(): Broadcaster {
    return this.subscribers.broadcaster;
  }

  /** True when `maxSubscribers` are connected to this process: a new subscriber is refused. */
  get subscribersFull(): boolean {
    return this.subscribers.full;
  }

  /**
   * Starts the source (the publisher runs the heartbeat of every push connection). Resolves once the first element is published if the
   * source produces one at once (the simulator, a replay), else at once (web APIs, MQTT, ingest).
   */
  async start(): Promise<void> {
    // After a restart, /latest serves the last durable element before the source produces more.
    if (this.#writer !== undefined && this.log.latestSeq > 0) await this.latestCache.reached(this.log.latestSeq);
    let first: Promise<unknown> | undefined;
    if (this.#writer !== undefined) {
      this.#options.source.start((observations, generatedAt) => {
        const published = this.publish(observations, generatedAt).catch(this.#options.onError);
        first ??= published;
      });
    }
    await first;
  }

  async stop(): Promise<void> {
    await this.#options.source.stop();
  }

  /**
   * Appends one element built from `observations`. Resolves with it once it is durable and
   * `/latest` serves it or a newer one (its broadcast starts as soon as it is durable); rejects,
   * and changes nothing, if rendering or the append fails.
   */
  publish(observations: readonly Observation[], generatedAt: Date): Promise<LoggedElement> {
    return this.#served(this.#writerOrThrow().publish(observations, generatedAt));
  }

  /** Appends one element holding `triples` (ingest), with the request's idempotency key if any: same guarantees as `publish`. */
  publishTriples(triples: readonly Quad[], generatedAt: Date, idempotency?: IdempotencyStamp): Promise<LoggedElement> {
    return this.#served(this.#writerOrThrow().publishTriples(triples, generatedAt, idempotency));
  }

  /** A replica's way in: an element the writer made durable. */
  replicate(element: LoggedElement): Promise<void> {
    return this.log.append(element);
  }

  /** A replica's `/latest`: the bytes the writer compressed. */
  replicateLatest(latest: LatestElement): void {
    this.latestCache.set(latest);
  }

  /** Registers an SSE subscriber (see `SubscriberRegistry.subscribe`). */
  subscribe(sink: SubscriberSink, format: Feed, encoder: EventStreamEncoder, plan: ResumePlan): Subscriber {
    return this.subscribers.subscribe(sink, format, encoder, plan);
  }

  /** Registers a data WebSocket (see `SubscriberRegistry.subscribeWebSocket`). */
  subscribeWebSocket(sink: WebSocketSink, format: Feed, plan: ResumePlan): WebSocketSubscriber {
    return this.subscribers.subscribeWebSocket(sink, format, plan);
  }

  #writerOrThrow(): ElementWriter {
    if (this.#writer === undefined) throw new Error(`stream ${this.definition.id}: elements are appended by the writer process`);
    return this.#writer;
  }

  async #served(appended: Promise<LoggedElement>): Promise<LoggedElement> {
    const element = await appended;
    await this.latestCache.reached(element.seq);
    return element;
  }
}
