import type { FastifyInstance, FastifyListenOptions } from 'fastify';
import type { Server } from 'node:net';
import type { pino } from 'pino';
import { CONTEXT_PATH, formatNames, ontologyPath, streamIri, STREAMS_PATH } from '@rdf-stream/protocol';
import type { PublisherConfig } from './config/config-schema.js';
import { buildApp } from './http/app.js';
import { shutdownRetryMs } from './http/sse-headers-and-retries.js';
import type { LifecycleState } from './http/app-context.js';
import { PrometheusMetrics } from './http/prometheus-metrics.js';
import { join } from 'node:path';
import type { EventLog } from './log/event-log.js';
import { FileEventLog } from './log/file-event-log.js';
import { lockDataDirectory } from './log/log-directory.js';
import { MemoryEventLog } from './log/memory-event-log.js';
import { connectRedis, type RedisConnection, redactedUrl } from './log/redis/redis-connection.js';
import { RedisEventLog } from './log/redis/redis-event-log.js';
import { LeasedSource, leaseIfGenerated } from './log/redis/leased-source.js';
import { streamKeys } from './log/redis/redis-keys.js';
import { loadBundledContext } from './model/bundled-context.js';
import { loadBundledOntologies } from './model/bundled-ontologies.js';
import { ns } from './model/vocabulary.js';
import { catalogueQuads, descriptorQuads } from './publish/descriptor.js';
import type { ChannelStore } from './publish/notifications/channel-store.js';
import { redisChannelStore } from './publish/notifications/redis-channel-store.js';
import { NotificationChannels } from './publish/notifications/notification-channels.js';
import { PushConnections } from './publish/push-connections.js';
import { type StreamDefinition, StreamHub } from './publish/stream-hub.js';
import { JsonLdWriter } from './render/jsonld-writer.js';
import { NegotiationCache } from './render/headers/negotiate.js';
import { renderStaticDocument, type StaticDocument } from './render/static-document.js';
import type { ElementSource } from './source/element-source.js';
import { createSource } from './source/source-from-config.js';
import { restoreIdempotencyKeys } from './http/ingest/idempotency-keys.js';
import { createIngestEndpoint, type IngestEndpoint } from './http/ingest/ingest-endpoint.js';
import { createLogger } from './logger.js';
import type { Logger } from './clock-and-logger.js';

export interface PublisherOptions {
  /** Replaces the first stream's source (e.g. a `ManualSource` in tests or an embedding program). */
  readonly source?: ElementSource;
  /** Replaces the sources of the streams with these ids (cluster workers, tests). */
  readonly sources?: ReadonlyMap<string, ElementSource>;
  readonly healthCheck?: () => Promise<boolean>;
  /**
   * Where the built live page and the browser client (`/client/rdf-stream-live.js`) are read
   * from, once, at start; default the package's `page-assets/`, which packages/dashboard's build writes.
   */
  readonly pageAssetsDirectory?: string;
  /** Collect Node process metrics (off in tests that build many publishers). */
  readonly processMetrics?: boolean;
  /**
   * `replica` (cluster workers): the streams' logs are read, not written; elements arrive
   * through `StreamHub.replicate`. `epochs` then names each memory log's epoch (the writer's).
   */
  readonly role?: 'writer' | 'replica';
  readonly epochs?: ReadonlyMap<string, string>;
  /** The time the history's grace period (`historyGraceSeconds`) is measured on; `Date.now` by default (tests: a manual clock). */
  readonly now?: () => number;
  /**
   * Where the Solid notification channels are described: this process's memory by default; a
   * `RedisChannelStore` shares them with every instance on one Redis and keeps them across restarts.
   */
  readonly channelStore?: ChannelStore;
}

export interface Publisher {
  readonly app: FastifyInstance;
  readonly hubs: ReadonlyMap<string, StreamHub>;
  /** The ingest streams' endpoints (token digest, shapes, `Idempotency-Key` answers), by stream id. */
  readonly ingest: ReadonlyMap<string, IngestEndpoint>;
  readonly config: PublisherConfig;
  /** Starts every stream's source; resolves once each has published its first element. */
  start(): Promise<void>;
  /**
   * Listens on `config.host:config.port`, or takes over the socket `bound` already listens on
   * (see bind-free-port.ts): `--port 0` binds before the publisher is built. Resolves with the bound address.
   */
  listen(bound?: Server): Promise<string>;
  /**
   * Graceful shutdown: refuse new requests, answer long-polls, tell every subscriber to come
   * back after a random delay (up to `shutdownRetryJitterMs`), close, all within
   * `shutdownTimeoutMs`. Resolves with true when everything closed in time.
   */
  shutdown(): Promise<boolean>;
}

const descriptorPrefixes = {
  dcat: ns.dcat,
  dcterms: ns.dcterms,
  ldes: ns.ldes,
  vocals: ns.vocals,
  prov: ns.prov,
  xsd: ns.xsd,
  formats: ns.formats,
};

/**
 * The composition root: builds every collaborator from the configuration and wires them by hand
 * — the streams' logs, one hub per stream on its log, the ingest endpoints, the HTTP application.
 */
export async function createPublisher(config: PublisherConfig, options: PublisherOptions = {}): Promise<Publisher> {
  const logger = createLogger(config);
  const role = options.role ?? 'writer';
  // Sources first: a recording or a mapping they refuse stops the start before any log (or the
  // data directory) is created.
  const sources = createSources(config, options, logger);
  const storage = await openStorage(config, role, logger, options.epochs, sources);
  const metrics = new PrometheusMetrics(options.processMetrics ?? true);
  const context = loadBundledContext();
  const jsonLd = new JsonLdWriter(context.document, `${config.baseUrl}${CONTEXT_PATH}`);
  const hubs = buildHubs(config, storage.sources, options, role, { logs: storage.logs, jsonLd, metrics, logger });
  const ingest = new Map(
    config.streams.filter((stream) => stream.source.kind === 'ingest').map((stream) => [stream.id, createIngestEndpoint(stream, config)] as const),
  );
  // Before the first request: a retry after a crash must find the key stored with its element.
  if (role === 'writer') {
    for (const [id, endpoint] of ingest) {
      const hub = hubs.get(id);
      if (hub === undefined) continue;
      const keys = await restoreIdempotencyKeys(endpoint, hub.log, config);
      if (keys > 0) logger.info({ stream: id, keys }, 'Idempotency-Keys restored from the log');
    }
  }
  metrics.watchLogs([...hubs.values()].map((hub) => ({ streamId: hub.definition.id, up: () => hub.log.appendFailure === undefined })));
  metrics.watchSources(
    [...hubs.values()].map((hub) => ({ streamId: hub.definition.id, kind: hub.source.kind, health: () => hub.source.health() })),
  );
  const notifications = new NotificationChannels({
    logs: storage.logs,
    limits: config,
    onError: (error) => logger.error({ err: error }, 'notification dispatch failed'),
    // On a shared log, channels are shared too: receiveFrom works on any instance, and after a restart.
    ...channelStoreOf(options, storage, config),
  });
  const push = new PushConnections(
    [...[...hubs.values()].map((hub) => hub.broadcaster), notifications],
    (error) => logger.error({ err: error }, 'heartbeat failed'),
  );
  const lifecycle: LifecycleState = { closing: false };
  const app = await buildApp({
    config,
    hubs,
    descriptors: new Map(
      [...hubs.values()].map((hub) => [hub.definition.id, renderStaticDocument(descriptorQuads(hub.definition), jsonLd, descriptorPrefixes)]),
    ),
    catalogue: renderStaticDocument(catalogueQuads(`${config.baseUrl}${STREAMS_PATH}`, [...hubs.values()].map((hub) => hub.definition)), jsonLd, descriptorPrefixes),
    contextDocument: context.bytes,
    ontologies: renderOntologies(jsonLd),
    jsonLd,
    logger,
    ingest,
    notifications,
    metrics,
    negotiation: new NegotiationCache(config.negotiationCacheEntries),
    lifecycle,
    ...(options.healthCheck ? { healthCheck: options.healthCheck } : {}),
    ...(options.pageAssetsDirectory === undefined ? {} : { pageAssetsDirectory: options.pageAssetsDirectory }),
    ...(options.now ? { now: options.now } : {}),
  });

  return {
    app,
    hubs,
    ingest,
    config,
    async start() {
      // Compile every ingest stream's shapes first: a broken shapes file stops the start.
      await Promise.all([...ingest.values()].map((endpoint) => endpoint.validator?.load()));
      await Promise.all([...hubs.values()].map((hub) => hub.start()));
      push.startHeartbeat(config.heartbeatMs);
    },
    listen: (bound) => app.listen(bound === undefined ? { host: config.host, port: config.port, backlog: config.listenBacklog } : takeOver(bound, config.listenBacklog)),
    shutdown() {
      lifecycle.closing = true;
      return withinTimeout(drain(config, app, hubs, push, ingest, storage), config.shutdownTimeoutMs);
    },
  };
}

/**
 * The vocabulary, profile and shapes documents in every format, by the path each of their IRIs
 * is served at: read and rendered once, Turtle (and TriG) as the files are written.
 */
function renderOntologies(jsonLd: JsonLdWriter): Map<string, StaticDocument> {
  const documents = new Map<string, StaticDocument>();
  for (const ontology of loadBundledOntologies()) {
    const document = renderStaticDocument(ontology.quads, jsonLd, ontology.prefixes, { turtle: ontology.turtle, trig: ontology.turtle });
    for (const iri of ontology.iris) documents.set(ontologyPath(iri) as string, document);
  }
  return documents;
}

function channelStoreOf(options: PublisherOptions, storage: Storage, config: PublisherConfig): { store?: ChannelStore } {
  if (options.channelStore !== undefined) return { store: options.channelStore };
  return storage.redis === undefined ? {} : { store: redisChannelStore(storage.redis, config.redisKeyPrefix) };
}

/** The streams' logs, and the data directory's lock (a writer holds it while it runs). */
interface Storage {
  readonly logs: ReadonlyMap<string, EventLog>;
  /** The connection to the shared logs' server (`log: redis`), which leases and channels use too. */
  readonly redis: RedisConnection | undefined;
  /** The streams' sources; on a shared log, a generated one runs under its lease (`LeasedSource`). */
  readonly sources: ReadonlyMap<string, ElementSource>;
  close(): Promise<void>;
}

async function openStorage(
  config: PublisherConfig,
  role: 'writer' | 'replica',
  logger: Logger,
  epochs: ReadonlyMap<string, string> | undefined,
  sources: ReadonlyMap<string, ElementSource>,
): Promise<Storage> {
  // One writer per data directory: a second publisher on it stops at start-up.
  const unlock = config.log === 'file' && role === 'writer' ? lockDataDirectory(config.dataDir) : () => {};
  // Shared logs: one command connection for every stream (each log adds its own reader).
  const redis = config.log === 'redis' ? await connectRedis(config.redisUrl, logger) : undefined;
  const logs = new Map<string, EventLog>();
  const close = async () => {
    await Promise.all([...logs.values()].map((log) => log.close()));
    unlock();
    if (redis !== undefined) await redis.close().catch(() => redis.destroy());
  };
  const leased = new Map(sources);
  try {
    for (const stream of config.streams) {
      if (redis === undefined) {
        logs.set(stream.id, await openLog(config, stream, role, logger, epochs?.get(stream.id)));
        continue;
      }
      // A generated source runs on the holder of its lease, whose token fences the stream's appends.
      const source = leaseIfGenerated(sources.get(stream.id) as ElementSource, {
        redis,
        keyPrefix: config.redisKeyPrefix,
        leaseMs: config.sourceLeaseMs,
        streamId: stream.id,
        latestElement: () => (logs.get(stream.id) as RedisEventLog).readNewest(),
        logger,
      });
      leased.set(stream.id, source);
      const fencingToken = source instanceof LeasedSource ? () => source.lease.token : undefined;
      logs.set(stream.id, await openRedisLog(config, stream, redis, logger, fencingToken));
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { logs, redis, sources: leased, close };
}

/**
 * Listen options that hand the socket `bound` listens on to the HTTP server. Node's
 * `server.listen({ handle })` takes a listening handle as it is; Fastify passes its options
 * through. The host is the bound address, never `localhost`, for which Fastify would bind more.
 */
function takeOver(bound: Server, backlog: number): FastifyListenOptions {
  const address = bound.address();
  if (address === null || typeof address === 'string') throw new TypeError('the bound server must listen on a TCP port');
  const { _handle: handle } = bound as Server & { _handle: unknown };
  return { host: address.address, backlog, handle } as FastifyListenOptions;
}

/** Every configured stream's source, or the one `options` substitutes for it. */
function createSources(config: PublisherConfig, options: PublisherOptions, logger: pino.Logger): Map<string, ElementSource> {
  return new Map(
    config.streams.map((stream, index) => [
      stream.id,
      options.sources?.get(stream.id) ??
        (index === 0 ? options.source : undefined) ??
        createSource(stream, config, logger.child({ stream: stream.id })),
    ]),
  );
}

/** One hub per configured stream, on its log and its source. */
function buildHubs(
  config: PublisherConfig,
  sources: ReadonlyMap<string, ElementSource>,
  options: PublisherOptions,
  role: 'writer' | 'replica',
  shared: { readonly logs: ReadonlyMap<string, EventLog>; readonly jsonLd: JsonLdWriter; readonly metrics: PrometheusMetrics; readonly logger: pino.Logger },
): Map<string, StreamHub> {
  const hubs = new Map<string, StreamHub>();
  // maxSubscribers is one budget for the process: every stream's subscribers hold a descriptor.
  const subscribersInProcess = () => [...hubs.values()].reduce((count, hub) => count + hub.broadcaster.size, 0);
  config.streams.forEach((stream) => {
    const source = sources.get(stream.id) as ElementSource;
    const definition = streamDefinition(config, stream, source, source === options.source);
    hubs.set(
      stream.id,
      new StreamHub({
        baseUrl: config.baseUrl,
        definition,
        source,
        log: shared.logs.get(stream.id) as EventLog,
        jsonLd: shared.jsonLd,
        metrics: shared.metrics,
        limits: config,
        onError: (error) => shared.logger.error({ err: error, stream: definition.id }, 'stream pipeline failed'),
        subscribersInProcess,
        role,
        reconnectDelayMs: shutdownRetryMs(config),
      }),
    );
  });
  return hubs;
}

/**
 * What a stream is: the one place its expected interval is decided — the configuration's, else
 * (or for a source an embedding program substitutes) the source's own.
 */
function streamDefinition(
  config: PublisherConfig,
  stream: PublisherConfig['streams'][number],
  source: ElementSource,
  substituted: boolean,
): StreamDefinition {
  const expectedIntervalMs =
    stream.intervalSeconds === undefined || substituted
      ? source.expectedIntervalMs
      : stream.intervalSeconds === null
        ? null
        : stream.intervalSeconds * 1000;
  return {
    id: stream.id,
    title: stream.title,
    iri: streamIri(config.baseUrl, stream.id),
    expectedIntervalMs,
    retainedElements: stream.retainedElements,
    retainedSeconds: stream.retainedSeconds,
    ...(stream.description === undefined ? {} : { description: stream.description }),
    ...(stream.license === undefined ? {} : { license: stream.license }),
  };
}

/**
 * Graceful shutdown, step by step: stop the sources and answer held long-polls, tell every
 * push connection (SSE, WebSocket, Solid notifications) to come back after a random delay,
 * close the HTTP server, the validators, and last the logs (everything durable is flushed)
 * and the data directory's lock.
 */
async function drain(
  config: PublisherConfig,
  app: FastifyInstance,
  hubs: ReadonlyMap<string, StreamHub>,
  push: PushConnections,
  ingest: ReadonlyMap<string, IngestEndpoint>,
  storage: Storage,
): Promise<boolean> {
  await Promise.all(
    [...hubs.values()].map(async (hub) => {
      await hub.waiters.release('timeout');
      await hub.stop().catch((error: unknown) => app.log.error({ err: error, stream: hub.definition.id }, 'source did not stop cleanly'));
    }),
  );
  await push.closeAll(shutdownRetryMs(config));
  await app.close();
  await Promise.all([...ingest.values()].map((endpoint) => endpoint.validator?.close()));
  await storage.close();
  return true;
}

/** `work`'s result, or false if it has not settled within `timeoutMs`. */
async function withinTimeout(work: Promise<boolean>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, false);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A stream's log in the shared logs' server (`log: redis`). */
async function openRedisLog(
  config: PublisherConfig,
  stream: PublisherConfig['streams'][number],
  client: RedisConnection,
  logger: Logger,
  fencingToken: (() => string | undefined) | undefined,
): Promise<RedisEventLog> {
  const log = await RedisEventLog.open({
    streamId: stream.id,
    baseUrl: config.baseUrl,
    keys: streamKeys(config.redisKeyPrefix, stream.id),
    client,
    formats: formatNames,
    pageElements: config.pageElements,
    retention: { retainedElements: stream.retainedElements, retainedSeconds: stream.retainedSeconds },
    cacheBytes: config.logCacheBytes,
    waitReplicas: config.redisWaitReplicas,
    appendTimeoutMs: config.redisAppendTimeoutMs,
    readBlockMs: config.redisReadBlockMs,
    idempotencyTtlMs: config.idempotencyKeyTtlSeconds * 1000,
    retentionIntervalMs: config.logRetentionIntervalMs,
    ...(fencingToken === undefined ? {} : { fencingToken }),
    logger,
  });
  logger.info({ stream: stream.id, redis: redactedUrl(config.redisUrl), epoch: log.epoch, oldestSeq: log.oldestSeq ?? null, latestSeq: log.latestSeq }, 'shared log opened');
  return log;
}

/** A stream's log: durable under `{dataDir}/streams/{id}` (read-only in a replica), or in memory. */
async function openLog(
  config: PublisherConfig,
  stream: PublisherConfig['streams'][number],
  role: 'writer' | 'replica',
  logger: Logger,
  epoch: string | undefined,
): Promise<EventLog> {
  const retention = { retainedElements: stream.retainedElements, retainedSeconds: stream.retainedSeconds };
  if (config.log === 'memory') {
    return new MemoryEventLog(config.pageElements, retention, { ...(epoch === undefined ? {} : { epoch }), replica: role === 'replica' });
  }
  const directory = join(config.dataDir, 'streams', stream.id);
  const log = await FileEventLog.open({
    streamId: stream.id,
    directory,
    formats: formatNames,
    pageElements: config.pageElements,
    retention,
    cacheBytes: config.logCacheBytes,
    syncIntervalMs: config.logSyncIntervalMs,
    maxPendingBytes: config.logMaxPendingBytes,
    retentionIntervalMs: config.logRetentionIntervalMs,
    logger,
    role,
  });
  logger.info({ stream: stream.id, directory, epoch: log.epoch, oldestSeq: log.oldestSeq ?? null, latestSeq: log.latestSeq }, 'log opened');
  return log;
}
