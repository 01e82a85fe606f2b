import type { FastifyBaseLogger } from 'fastify';
import type { PublisherConfig } from '../config/config-schema.js';
import { echoed, PublisherError } from '../errors.js';
import type { NotificationChannels } from '../publish/notifications/notification-channels.js';
import type { StreamHub } from '../publish/stream-hub.js';
import type { JsonLdWriter } from '../render/jsonld-writer.js';
import type { NegotiationCache } from '../render/headers/negotiate.js';
import type { StaticDocument } from '../render/static-document.js';
import type { IngestEndpoint } from './ingest/ingest-endpoint.js';
import type { PrometheusMetrics } from './prometheus-metrics.js';

/** Set when SIGTERM arrives: new requests are refused, subscribers told to come back later. */
export interface LifecycleState {
  closing: boolean;
}

/** Everything the routes need, built once by the composition root. */
export interface AppContext {
  readonly config: PublisherConfig;
  readonly hubs: ReadonlyMap<string, StreamHub>;
  readonly descriptors: ReadonlyMap<string, StaticDocument>;
  readonly catalogue: StaticDocument;
  readonly contextDocument: Buffer;
  /** The vocabulary, profile and shapes documents (`ONTOLOGIES_PATH`), by request path, rendered at start. */
  readonly ontologies: ReadonlyMap<string, StaticDocument>;
  /** The JSON-LD writer of every document, against the bundled context. */
  readonly jsonLd: JsonLdWriter;
  /** The streams that accept `POST /streams/{id}`, by id. */
  readonly ingest: ReadonlyMap<string, IngestEndpoint>;
  /** The Solid notification channels of every stream (their heartbeat and shutdown are the publisher's). */
  readonly notifications: NotificationChannels;
  readonly metrics: PrometheusMetrics;
  readonly negotiation: NegotiationCache;
  readonly lifecycle: LifecycleState;
  /** The process's logger, shared with the sources; Fastify makes its own when absent. */
  readonly logger?: FastifyBaseLogger;
  /** Extra readiness probe (e.g. a shared log's connection); shedding starts when it fails. */
  readonly healthCheck?: () => Promise<boolean>;
  /** Where the built live page and the browser client are read from; default the package's `page-assets/`. */
  readonly pageAssetsDirectory?: string;
  /** The time the history's grace period is measured on (ms since epoch); `Date.now` by default. */
  readonly now?: () => number;
}

export function hubOf(context: AppContext, id: string): StreamHub {
  const hub = context.hubs.get(id);
  if (hub === undefined) throw new PublisherError('PUB_ERR_STREAM_NOT_FOUND', `No stream with id "${echoed(id)}"`);
  return hub;
}
