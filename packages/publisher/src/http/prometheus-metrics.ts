import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { CutReason, Transport } from '../publish/sse/push-subscriber.js';
import type { StreamMetrics } from '../publish/stream-metrics.js';
import type { SourceHealth } from '../source/element-source.js';

/** What the metrics read of each stream's log when scraped: whether it can be written now. */
export interface LogProbe {
  readonly streamId: string;
  up(): boolean;
}

/** What the metrics read of each stream's source when scraped. */
export interface SourceProbe {
  readonly streamId: string;
  readonly kind: string;
  health(): SourceHealth;
}

/** V8's spaces whose content survives collections (not the young generation). */
const isOldGeneration = (space: string) => space !== 'new_space' && space !== 'new_large_object_space';
/** The old generation in use after the latest full collection (bytes); 0 before the first. */
let retainedHeapBytes = 0;
let retainedHeapObserver: PerformanceObserver | undefined;

/**
 * Watches full (mark-compact) collections, once per process however many publishers it holds, and
 * notes what the old generation holds just after each: the memory really retained, without the
 * saw-tooth of garbage that heap-used and RSS show. Read promptly after the collection, so that
 * little has been promoted since.
 */
function watchRetainedHeap(): void {
  if (retainedHeapObserver !== undefined) return;
  retainedHeapObserver = new PerformanceObserver((list) => {
    if (!list.getEntries().some((entry) => (entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) return;
    retainedHeapBytes = getHeapSpaceStatistics()
      .filter((space) => isOldGeneration(space.space_name))
      .reduce((sum, space) => sum + space.space_used_size, 0);
  });
  retainedHeapObserver.observe({ entryTypes: ['gc'] });
}

/**
 * Seconds, for what each element takes — its broadcast's duration and CPU time, the delay until
 * `/latest` serves it: from half a millisecond to 5 s.
 */
const ELEMENT_SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * Prometheus metrics of one publisher. Labels are bounded: `stream` takes configured stream ids,
 * `route` the registered route patterns, `status` a status class (2xx…5xx). Never per client.
 */

/** Requests of one route, method and status class answered since the last scrape. */
interface PendingRequests {
  readonly labels: { readonly route: string; readonly method: string; readonly status: string };
  count: number;
}

export class PrometheusMetrics implements StreamMetrics {
  readonly registry = new Registry();
  readonly #published = new Counter({
    name: 'rdf_stream_elements_published_total',
    help: 'Elements published',
    labelNames: ['stream'] as const,
    registers: [this.registry],
  });
  readonly #subscribers = new Gauge({
    name: 'rdf_stream_subscribers',
    help: 'Connected push subscribers (SSE and WebSocket together; see rdf_stream_transport_subscribers)',
    labelNames: ['stream'] as const,
    registers: [this.registry],
  });
  readonly #transportSubscribers = new Gauge({
    name: 'rdf_stream_transport_subscribers',
    help: 'Connected push subscribers by transport: "sse" (/events) or "websocket" (/ws)',
    labelNames: ['stream', 'transport'] as const,
    registers: [this.registry],
  });
  readonly #evicted = new Counter({
    name: 'rdf_stream_subscribers_evicted_total',
    help: 'Push subscribers (SSE and WebSocket) and held long-polls cut: reason "queue" (bytes their client has not acknowledged, kernel queue included, over maxSubscriberQueueBytes), "stall" (nothing acknowledged, or no drain, within subscriberStallTimeoutMs) or "pong" (a WebSocket that answered no ping within wsPongTimeoutMs)',
    labelNames: ['stream', 'reason'] as const,
    registers: [this.registry],
  });
  readonly #servedDelay = new Histogram({
    name: 'rdf_stream_element_served_delay_seconds',
    help: 'Time from an element\'s generation (prov:generatedAtTime) to /latest serving it: its append made durable and its formats compressed. Polling and long-polling clients cannot get an element before; SSE and WebSocket subscribers get it once durable',
    labelNames: ['stream'] as const,
    buckets: ELEMENT_SECONDS_BUCKETS,
    registers: [this.registry],
  });
  readonly #broadcastDuration = new Histogram({
    name: 'rdf_stream_broadcast_duration_seconds',
    help: 'Time to write one element to every push subscriber (SSE and WebSocket)',
    labelNames: ['stream'] as const,
    buckets: ELEMENT_SECONDS_BUCKETS,
    registers: [this.registry],
  });
  readonly #broadcastCpu = new Histogram({
    name: 'rdf_stream_broadcast_cpu_seconds',
    help: 'CPU time of the batches that write one element to every push subscriber (SSE and WebSocket) (yields excluded)',
    labelNames: ['stream'] as const,
    buckets: ELEMENT_SECONDS_BUCKETS,
    registers: [this.registry],
  });
  readonly #broadcastReach = new Gauge({
    name: 'rdf_stream_broadcast_subscribers',
    help: 'Subscribers reached by the last broadcast',
    labelNames: ['stream'] as const,
    registers: [this.registry],
  });
  /** Held long-polls by stream, as last told (every hold and release changes it): set on the gauge when it is collected. */
  readonly #longPollWaiting = new Map<string, number>();
  readonly #longPollWaiters = new Gauge({
    name: 'rdf_stream_long_poll_waiting',
    help: 'Long-poll requests currently held',
    labelNames: ['stream'] as const,
    registers: [this.registry],
    collect: () => {
      for (const [stream, count] of this.#longPollWaiting) this.#longPollWaiters.set({ stream }, count);
    },
  });
  /**
   * Requests answered since the last scrape, by route, method and status class: counted with a
   * number per answer (long-poll releases answer thousands in a burst), added to the counter
   * when it is collected. prom-client hashes the labels at every `inc`, even of a labelled child;
   * and looked up by route, then method (strings the caller has already), then status class,
   * so that counting an answer makes no key of its own either.
   */
  readonly #requestsPending = new Map<string, Map<string, Array<PendingRequests | undefined>>>();
  readonly #requests = new Counter({
    name: 'rdf_stream_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status class',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
    collect: () => {
      for (const byMethod of this.#requestsPending.values()) {
        for (const byStatus of byMethod.values()) {
          for (const pending of byStatus) {
            if (pending === undefined || pending.count === 0) continue;
            this.#requests.inc(pending.labels, pending.count);
            pending.count = 0;
          }
        }
      }
    },
  });
  #sources: readonly SourceProbe[] = [];
  #logs: readonly LogProbe[] = [];

  constructor(collectProcessMetrics = true) {
    if (collectProcessMetrics) {
      collectDefaultMetrics({ register: this.registry });
      watchRetainedHeap();
      new Gauge({
        name: 'rdf_stream_heap_retained_bytes',
        help: "V8's old generation in use just after the latest full garbage collection (0 before the first): what the process really holds; a rise over hours is a leak",
        registers: [this.registry],
        collect() {
          this.set(retainedHeapBytes);
        },
      });
    }
    const sources = () => this.#sources;
    // Read from each source's health() when scraped: no timer, no state of their own.
    new Gauge({
      name: 'rdf_stream_source_up',
      help: "1 when a stream's source works (ok), 0 when it is starting, degraded or stopped",
      labelNames: ['stream', 'kind'] as const,
      registers: [this.registry],
      collect() {
        for (const source of sources()) this.set({ stream: source.streamId, kind: source.kind }, source.health().state === 'ok' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'rdf_stream_source_lease_holder',
      help: "With a shared log: 1 on the instance that holds a stream's source lease and runs its source, 0 on the others (whose rdf_stream_source_up says 1 while another runs it); summed over the instances, 1 in the steady state. Absent without a shared log",
      labelNames: ['stream', 'kind'] as const,
      registers: [this.registry],
      collect() {
        for (const source of sources()) {
          const { leaseHolder } = source.health();
          if (leaseHolder !== undefined) this.set({ stream: source.streamId, kind: source.kind }, leaseHolder ? 1 : 0);
        }
      },
    });
    const logs = () => this.#logs;
    new Gauge({
      name: 'rdf_stream_log_up',
      help: "1 when a stream's log accepts appends, 0 while it cannot (a full disk; a shared log's server unreachable: the stream is served from what the instance holds)",
      labelNames: ['stream'] as const,
      registers: [this.registry],
      collect() {
        for (const log of logs()) this.set({ stream: log.streamId }, log.up() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'rdf_stream_source_records_rejected',
      help: 'Upstream records a source could not map to observations since it started (logged and skipped)',
      labelNames: ['stream'] as const,
      registers: [this.registry],
      collect() {
        for (const source of sources()) this.set({ stream: source.streamId }, source.health().recordsRejected);
      },
    });
  }

  /** The sources whose health `/metrics` reports (set once the streams are built). */
  watchSources(sources: readonly SourceProbe[]): void {
    this.#sources = sources;
  }

  /** The logs whose state `/metrics` reports. */
  watchLogs(logs: readonly LogProbe[]): void {
    this.#logs = logs;
  }

  elementPublished(streamId: string): void {
    this.#published.inc({ stream: streamId });
  }

  elementServed(streamId: string, delaySeconds: number): void {
    this.#servedDelay.observe({ stream: streamId }, delaySeconds);
  }

  broadcastFinished(streamId: string, durationSeconds: number, subscribers: number, cpuSeconds: number): void {
    this.#broadcastDuration.observe({ stream: streamId }, durationSeconds);
    this.#broadcastCpu.observe({ stream: streamId }, cpuSeconds);
    this.#broadcastReach.set({ stream: streamId }, subscribers);
  }

  subscribersChanged(streamId: string, count: number): void {
    this.#subscribers.set({ stream: streamId }, count);
  }

  transportSubscribersChanged(streamId: string, transport: Transport, count: number): void {
    this.#transportSubscribers.set({ stream: streamId, transport }, count);
  }

  subscriberEvicted(streamId: string, reason: CutReason): void {
    this.#evicted.inc({ stream: streamId, reason });
  }

  longPollWaitersChanged(streamId: string, count: number): void {
    this.#longPollWaiting.set(streamId, count);
  }

  /** `route` must be a route pattern (or 'unmatched'), never a raw URL. */
  requestAnswered(route: string, method: string, statusCode: number): void {
    const statusClass = Math.floor(statusCode / 100);
    let byMethod = this.#requestsPending.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      this.#requestsPending.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) {
      byStatus = [];
      byMethod.set(method, byStatus);
    }
    const pending = byStatus[statusClass];
    if (pending === undefined) byStatus[statusClass] = { labels: { route, method, status: `${statusClass}xx` }, count: 1 };
    else pending.count++;
  }

}
