import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { PublisherConfig } from './config/config-schema.js';
import { buildApp } from './http/app.js';
import type { AppContext, LifecycleState } from './http/app-context.js';
import { PrometheusMetrics } from './http/prometheus-metrics.js';
import { join } from 'node:path';
import type { EventLog } from './log/event-log.js';
import { FileEventLog } from './log/file-event-log.js';
import { lockDataDirectory } from './log/log-directory.js';
import { MemoryEventLog } from './log/memory-event-log.js';
import { formatNames } from './render/formats.js';
import { CONTEXT_PATH, loadBundledContext } from './model/bundled-context.js';
import { streamIri } from './model/stream-element.js';
import { ns } from './model/vocabulary.js';
import { catalogueQuads, descriptorQuads } from './publish/descriptor.js';
import { type StreamDefinition, StreamHub } from './publish/stream-hub.js';
import { JsonLdWriter } from './render/jsonld-writer.js';
import { NegotiationCache } from './render/negotiate.js';
import { sseFrame } from './render/sse-frame.js';
import { renderStaticDocument } from './render/static-document.js';
import type { ElementSource, SourceLogger } from './source/element-source.js';
import { createSource } from './sources.js';
import { createIngestEndpoint, type IngestEndpoint } from './http/ingest-endpoint.js';

export interface PublisherOptions {
  /** Replaces the first stream's source (e.g. a `ManualSource` in tests or an embedding program). */
  readonly source?: ElementSource;
  /** Replaces the sources of the streams with these ids (cluster workers, tests). */
  readonly sources?: ReadonlyMap<string, ElementSource>;
  readonly healthCheck?: () => Promise<boolean>;
  /** Collect Node process metrics (off in tests that build many publishers). */
  readonly processMetrics?: boolean;
  /**
   * `replica` (cluster workers): the streams' logs are read, not written; elements arrive
   * through `StreamHub.replicate`. `epochs` then names each memory log's epoch (the writer's).
   */
  readonly role?: 'writer' | 'replica';
  readonly epochs?: ReadonlyMap<string, string>;
}

export interface Publisher {
  readonly app: FastifyInstance;
  readonly hubs: ReadonlyMap<string, StreamHub>;
  /** The ingest streams' endpoints (token digest, shapes, `Idempotency-Key` answers), by stream id. */
  readonly ingest: ReadonlyMap<string, IngestEndpoint>;
  readonly config: PublisherConfig;
  /** Starts every stream's source; resolves once each has published its first element. */
  start(): Promise<void>;
  /** Listens on `config.host:config.port`; resolves with the bound address. */
  listen(): Promise<string>;
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

/** The composition root: builds every collaborator from the configuration and wires them by hand. */
export async function createPublisher(config: PublisherConfig, options: PublisherOptions = {}): Promise<Publisher> {
  const metrics = new PrometheusMetrics(options.processMetrics ?? true);
  const context = loadBundledContext();
  const jsonLd = new JsonLdWriter(context.document, `${config.baseUrl}${CONTEXT_PATH}`);
  const lifecycle: LifecycleState = { closing: false };

  const log = pino({ level: config.logLevel });
  const hubs = new Map<string, StreamHub>();
  const subscribersInProcess = () => {
    let count = 0;
    for (const hub of hubs.values()) count += hub.broadcaster.size;
    return count;
  };
  const ingest = new Map<string, IngestEndpoint>();
  const role = options.role ?? 'writer';
  // One writer per data directory: a second publisher on it stops at start-up.
  const unlock = config.log === 'file' && role === 'writer' ? lockDataDirectory(config.dataDir) : () => {};
  const logs = new Map<string, EventLog>();
  try {
    for (const stream of config.streams) logs.set(stream.id, await openLog(config, stream, role, log, options.epochs?.get(stream.id)));
  } catch (error) {
    await Promise.all([...logs.values()].map((opened) => opened.close()));
    unlock();
    throw error;
  }
  config.streams.forEach((stream, index) => {
    const logger: SourceLogger = log.child({ stream: stream.id });
    const source =
      options.sources?.get(stream.id) ??
      (index === 0 ? options.source : undefined) ??
      createSource(stream, config, logger);
    const intervalMs =
      stream.intervalSeconds === undefined || source === options.source
        ? source.expectedIntervalMs
        : stream.intervalSeconds === null
          ? null
          : stream.intervalSeconds * 1000;
    const definition: StreamDefinition = {
      id: stream.id,
      title: stream.title,
      iri: streamIri(config.baseUrl, stream.id),
      expectedIntervalMs: intervalMs,
      retainedElements: stream.retainedElements,
      retainedSeconds: stream.retainedSeconds,
      ...(stream.description === undefined ? {} : { description: stream.description }),
      ...(stream.license === undefined ? {} : { license: stream.license }),
    };
    const hub = new StreamHub({
      baseUrl: config.baseUrl,
      definition,
      source,
      log: logs.get(stream.id) as EventLog,
      jsonLd,
      metrics,
      limits: config,
      onError: (error) => log.error({ err: error, stream: definition.id }, 'stream pipeline failed'),
      subscribersInProcess,
      role,
    });
    hubs.set(stream.id, hub);
    if (stream.source.kind === 'ingest') ingest.set(stream.id, createIngestEndpoint(stream, config));
  });

  metrics.watchSources(
    [...hubs.values()].map((hub) => ({ streamId: hub.definition.id, kind: hub.source.kind, health: () => hub.source.health() })),
  );

  const appContext: AppContext = {
    config,
    hubs,
    descriptors: new Map(
      [...hubs.values()].map((h) => [h.definition.id, renderStaticDocument(descriptorQuads(h.definition), jsonLd, descriptorPrefixes)]),
    ),
    catalogue: renderStaticDocument(
      catalogueQuads(`${config.baseUrl}/streams`, [...hubs.values()].map((h) => h.definition)),
      jsonLd,
      descriptorPrefixes,
    ),
    contextDocument: context.bytes,
    jsonLd,
    logger: log,
    ingest,
    metrics,
    negotiation: new NegotiationCache(config.negotiationCacheEntries),
    lifecycle,
    ...(options.healthCheck ? { healthCheck: options.healthCheck } : {}),
  };
  const app = await buildApp(appContext);

  return {
    app,
    hubs,
    ingest,
    config,
    async start() {
      // Compile every ingest stream's shapes first: a broken shapes file stops the start.
      await Promise.all([...ingest.values()].map((endpoint) => endpoint.validator?.load()));
      await Promise.all([...hubs.values()].map((h) => h.start()));
    },
    listen: () => app.listen({ host: config.host, port: config.port }),
    async shutdown() {
      lifecycle.closing = true;
      const drain = (async () => {
        await Promise.all(
          [...hubs.values()].map(async (h) => {
            h.waiters.release('timeout');
            await h.stop().catch((error: unknown) => app.log.error({ err: error, stream: h.definition.id }, 'source did not stop cleanly'));
          }),
        );
        await Promise.all(
          [...hubs.values()].map((h) =>
            h.broadcaster.closeAll(() =>
              sseFrame({
                comment: 'shutting down',
                retry: config.sseRetryMs + Math.round(Math.random() * config.shutdownRetryJitterMs),
              }),
            ),
          ),
        );
        await app.close();
        await Promise.all([...ingest.values()].map((endpoint) => endpoint.validator?.close()));
        await Promise.all([...logs.values()].map((opened) => opened.close()));
        unlock();
        return true;
      })();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolve) => {
        timer = setTimeout(resolve, config.shutdownTimeoutMs, false);
      });
      try {
        return await Promise.race([drain, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** A stream's log: durable under `{dataDir}/streams/{id}` (read-only in a replica), or in memory. */
async function openLog(
  config: PublisherConfig,
  stream: PublisherConfig['streams'][number],
  role: 'writer' | 'replica',
  logger: SourceLogger,
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
