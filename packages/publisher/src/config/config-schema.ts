import { type Static, Type } from '@sinclair/typebox';
import { STREAM_ID } from '@rdf-stream/protocol';
import { defaults } from './defaults.js';
import type { StreamConfig } from './stream-config.js';

const integer = (minimum: number, maximum: number, description: string) =>
  Type.Integer({ minimum, maximum, description });

/**
 * The publisher's configuration. Every property can come from a CLI flag (kebab-case, see
 * `flagAliases`), an environment variable (`RDF_STREAM_` + UPPER_SNAKE_CASE) or a JSON file.
 */
export const ConfigSchema = Type.Object(
  {
    host: Type.String({ minLength: 1, description: 'Address to listen on' }),
    port: integer(0, 65_535, 'TCP port to listen on (0 picks a free port, which the derived base URL then names)'),
    workers: integer(1, 64, 'HTTP worker processes sharing the port (node:cluster); each holds its own subscribers'),
    baseUrl: Type.Optional(
      Type.String({
        pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$',
        description: 'Public base URL used in IRIs and links (default http://HOST:PORT, with the port actually bound)',
      }),
    ),
    logLevel: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
      { description: 'Log level' },
    ),
    logFormat: Type.Union(
      ['auto', 'pretty', 'json'].map((format) => Type.Literal(format)),
      { description: 'Log lines: pretty (readable), json (one object a line), or auto (pretty when stdout is a terminal)' },
    ),
    streamId: Type.String({ pattern: STREAM_ID.source, description: 'Id of the demo stream' }),
    streamTitle: Type.String({ minLength: 1, maxLength: 200, description: 'Title of the demo stream' }),
    intervalSeconds: Type.Number({
      exclusiveMinimum: 0,
      maximum: 86_400,
      description: 'Seconds between two elements of the demo stream',
    }),
    facilities: integer(1, 10_000, 'Park-and-ride facilities in the demo stream (one observation each)'),
    seed: integer(0, 2 ** 31 - 1, 'Seed of the demo stream random walk'),
    log: Type.Union([Type.Literal('file'), Type.Literal('memory'), Type.Literal('redis')], {
      description:
        'Where streams are kept: file (durable, under --data-dir), memory (lost at exit), or redis (Redis or Valkey Streams at --redis-url, shared by every instance that names the same server)',
    }),
    redisUrl: Type.String({
      pattern: '^rediss?://\\S+$',
      description: 'Redis ≥ 7.2 or Valkey ≥ 7.2 server of the logs when log is redis: redis://[[user]:password@]host[:port][/db], rediss:// for TLS',
    }),
    redisKeyPrefix: Type.String({
      pattern: '^[A-Za-z0-9_.:-]{1,64}$',
      description: "First part of every Redis key the publisher uses (a stream's keys are {prefix}:{stream-id}:…): publishers sharing a prefix serve the same streams",
    }),
    redisWaitReplicas: integer(0, 64, 'Replicas that must confirm an append is on their disk (WAITAOF) before ingest answers 201, besides the server itself (count)'),
    redisAppendTimeoutMs: integer(10, 600_000, 'Milliseconds an append may wait for Redis to confirm it is on disk (WAITAOF) before ingest answers 503'),
    redisReadBlockMs: integer(10, 60_000, "Milliseconds one blocking read of a stream's log (XREAD BLOCK) waits for new elements before it is sent again"),
    sourceLeaseMs: integer(
      200,
      3_600_000,
      "Milliseconds a publisher instance holds the lease of a stream's source without renewing it (log redis): another instance takes the source over within this time after the holder dies",
    ),
    dataDir: Type.String({
      minLength: 1,
      description: "Directory of the durable logs (one folder per stream); in a configuration file, relative to the file's folder",
    }),
    retainedElements: integer(1, 100_000_000, "Elements a stream's log keeps at least (count)"),
    retainedSeconds: integer(0, 3_153_600_000, "Age limit of a stream's log in seconds (0: none)"),
    pageElements: integer(1, 100_000, 'Elements per history page and log segment (count), fixed when a log is created'),
    logSyncIntervalMs: integer(0, 10_000, 'Least milliseconds between two syncs of a log (group commit)'),
    logMaxPendingBytes: integer(1_024, 1_073_741_824, 'Bytes of appends waiting for their sync per stream; more are refused'),
    logCacheBytes: integer(0, 17_179_869_184, 'Decoded elements cached per stream for catch-up and history (bytes)'),
    historyCacheBytes: integer(0, 17_179_869_184, 'Rendered closed history pages kept in memory, with their br and gzip bodies, all streams together (bytes)'),
    historyGraceSeconds: integer(
      0,
      86_400,
      'Seconds a history page removed by retention still leads to the oldest retained page before 410; also the longest a cache may keep the history root and time index (0: none)',
    ),
    logRetentionIntervalMs: integer(100, 86_400_000, 'Milliseconds between background retention passes'),
    catchUpBatchElements: integer(1, 100_000, 'Elements read at a time for a catching-up SSE or WebSocket subscriber (count)'),
    heartbeatMs: integer(1_000, 3_600_000, 'Milliseconds between heartbeats: SSE comments, WebSocket pings'),
    sseRetryMs: integer(0, 3_600_000, 'Reconnection delay sent to SSE clients in milliseconds'),
    maxSubscribers: integer(1, 1_000_000, 'Push subscribers per process, SSE and WebSocket, all streams together (count)'),
    maxSubscriberQueueBytes: integer(
      1_024,
      1_073_741_824,
      'Bytes one SSE or WebSocket subscriber (or held long-poll) may leave unacknowledged (queued in the process and in the kernel) before it is evicted',
    ),
    subscriberStallTimeoutMs: integer(
      100,
      3_600_000,
      'Milliseconds an SSE or WebSocket subscriber may acknowledge nothing (or refuse data) while some is outstanding before it is evicted',
    ),
    subscriberProgressCheckMs: integer(
      0,
      60_000,
      'Milliseconds between two checks of what push clients acknowledged, kernel queues counted (0: off)',
    ),
    subscriberSendQueueReader: Type.Union(
      [Type.Literal('auto'), Type.Literal('table')],
      {
        description:
          'How those checks read kernel send queues: auto (ioctl SIOCOUTQ per outstanding socket where the optional koffi dependency loads on Linux, else /proc/net/tcp) or table (always one read of /proc/net/tcp per check)',
      },
    ),
    broadcastBatchSize: integer(1, 100_000, 'SSE and WebSocket subscribers (and held long-polls answered) written per event-loop turn'),
    wsMaxPayloadBytes: integer(125, 16_777_216, 'Largest frame a data WebSocket client may send, in bytes (close 1009 above; any data message is closed 1008)'),
    wsPongTimeoutMs: integer(1_000, 3_600_000, 'Milliseconds a data WebSocket may take to answer a ping before it is cut'),
    wsCloseTimeoutMs: integer(100, 600_000, 'Milliseconds the server waits for a WebSocket client to answer its close frame before cutting the connection'),
    maxNotificationChannels: integer(0, 10_000_000, 'Solid notification channels open at once, all streams together (count)'),
    notificationChannelTtlSeconds: integer(1, 2_000_000, 'Longest life of a Solid notification channel in seconds'),
    notificationSubscriptionMaxBodyBytes: integer(256, 1_048_576, 'Largest Solid notification subscription request in bytes'),
    maxLongPollWaiters: integer(0, 1_000_000, 'Long-poll requests held at once per stream (count)'),
    maxLongPollWaitSeconds: integer(1, 3_600, 'Longest wait granted to Prefer: wait=N'),
    microCacheSeconds: integer(0, 3_600, 'max-age for irregular streams and stalled sources in seconds'),
    negotiationCacheEntries: integer(0, 1_000_000, 'Memoised content-negotiation results (count)'),
    maxDescribedResources: integer(
      0,
      10_000_000,
      'Sensors and features of interest per stream whose description is kept (count); the least recently mentioned answers 404 first (0: none)',
    ),
    corsIngestOrigins: Type.String({
      pattern: '^\\s*(\\*|https?://[^\\s,/]+)?(\\s*,\\s*(\\*|https?://[^\\s,/]+))*\\s*$',
      description: 'Origins (comma-separated, or *) whose scripts may ingest and read /metrics; empty: none (reads are open to all)',
    }),
    listenBacklog: integer(1, 65_535, 'Connections the kernel may queue before the publisher accepts them (count; capped by net.core.somaxconn)'),
    keepAliveTimeoutMs: integer(1_000, 3_600_000, 'Milliseconds an idle keep-alive connection stays open'),
    latestRequestParser: Type.Union([Type.Literal('node'), Type.Literal('direct')], {
      description:
        "What reads polls and long-polls of /streams/{id}/latest: direct (the publisher reads plain GET and HEAD request heads itself and hands any other request, with its connection, to Node's parser) or node (Node's HTTP parser reads every request)",
    }),
    headersTimeoutMs: integer(1_000, 600_000, "Milliseconds a client may take to send a request's headers (408 after)"),
    requestTimeoutMs: integer(1_000, 3_600_000, 'Milliseconds a client may take to send a whole request, body included (408 after)'),
    shutdownTimeoutMs: integer(0, 600_000, 'Milliseconds allowed for a graceful shutdown'),
    shutdownRetryJitterMs: integer(0, 600_000, 'Upper bound of the retry delay sent to subscribers at shutdown'),
    ingestMaxBodyBytes: integer(1_024, 1_073_741_824, 'Largest ingest request body in bytes, also after decompression'),
    ingestMaxDiscardBytes: integer(0, 1_073_741_824, "Bytes of a refused ingest request's body read and discarded so that the client receives the answer"),
    ingestMaxTriples: integer(1, 10_000_000, 'Most triples in one ingested element (count)'),
    ingestMaxLiteralChars: integer(1, 100_000_000, 'Longest literal in an ingested element, in characters'),
    ingestMaxIriChars: integer(16, 1_000_000, 'Longest IRI in an ingested element, in characters'),
    ingestMaxJsonDepth: integer(1, 256, 'Deepest nesting of arrays and objects in an ingested JSON-LD body (levels)'),
    ingestMaxPendingValidations: integer(1, 100_000, 'SHACL validations waiting per ingest stream (count); more get 503'),
    idempotencyKeysRetained: integer(0, 10_000_000, 'Ingest answers kept per stream for Idempotency-Key replays (count); at start-up, the keys of this many newest elements are read back from the log'),
    idempotencyKeyTtlSeconds: integer(1, 31_536_000, 'Seconds an Idempotency-Key answer is kept'),
    webApiMaxBodyBytes: integer(1_024, 1_073_741_824, 'Largest web-API response a source reads, in bytes'),
    mqttMaxPayloadBytes: integer(16, 268_435_456, 'Largest MQTT message a source accepts, in bytes'),
    replayMaxFileBytes: integer(1_024, 4_294_967_296, 'Largest recording a replay source loads, in bytes'),
    sourceRetryInitialMs: integer(10, 3_600_000, 'First retry delay after an upstream failure, in milliseconds'),
    sourceRetryMaxMs: integer(10, 86_400_000, 'Longest retry delay after upstream failures, in milliseconds'),
    mqttReconnectMs: integer(10, 3_600_000, 'Milliseconds between MQTT reconnection attempts'),
    mqttConnectTimeoutMs: integer(100, 600_000, 'Milliseconds an MQTT connection attempt may take'),
    sparqlTimeoutMs: integer(10, 3_600_000, 'Milliseconds one SPARQL query may run in the query thread before it is stopped (503; the thread is started again)'),
    sparqlMaxResults: integer(1, 10_000_000, 'Most rows (SELECT) or triples (CONSTRUCT, DESCRIBE) one SPARQL result may hold (count); more: 422'),
    sparqlMaxQueued: integer(0, 100_000, 'SPARQL queries waiting for the query thread, all streams together (count); more get 503'),
    sparqlMaxElements: integer(1, 100_000, 'Most stream elements one SPARQL query may range over (count); a larger window: 400'),
    sparqlCacheElements: integer(1, 10_000_000, 'Parsed elements the query thread keeps for later queries (count; at least sparqlMaxElements are kept)'),
    sparqlCacheQuads: integer(0, 100_000_000, "Quads of the windows' triple stores the query thread keeps built for later queries on the same elements (count; 0: none)"),
    sparqlMaxQueryBytes: integer(64, 16_777_216, 'Longest SPARQL query, in bytes (a request body, or the query parameter); more: 413'),
    maxEventLoopTurnMs: integer(0, 10_000, 'Shed new requests (503, connection parked until Retry-After) while the mean event-loop delay exceeds this in milliseconds (0: off)'),
    shedHoldMs: integer(0, 600_000, 'Milliseconds shedding lasts after the event loop was last found saturated'),
    maxEventLoopDelayMs: integer(0, 60_000, 'Shed new requests above this event-loop delay (0: off)'),
    maxHeapUsedBytes: integer(0, Number.MAX_SAFE_INTEGER, 'Shed new requests above this heap size (0: off)'),
    maxRssBytes: integer(0, Number.MAX_SAFE_INTEGER, 'Shed new requests above this resident set size (0: off)'),
    pressureRetryAfterSeconds: integer(1, 3_600, 'Retry-After sent with 503 when shedding'),
  },
  { additionalProperties: false },
);

export type PublisherConfig = Readonly<Static<typeof ConfigSchema>> & {
  readonly baseUrl: string;
  /** True when no base URL was configured: it is `http://HOST:PORT` and follows the port actually bound (`--port 0`). */
  readonly baseUrlFollowsPort?: boolean;
  /**
   * The streams to serve: those of the configuration file's `streams`, or else the demo stream
   * built from `streamId`, `streamTitle`, `intervalSeconds`, `facilities` and `seed`.
   */
  readonly streams: readonly StreamConfig[];
};

/** CLI flags that differ from the kebab-case of their property. */
export const flagAliases: Readonly<Record<string, keyof typeof defaults>> = {
  interval: 'intervalSeconds',
};

type OptionKey = keyof typeof ConfigSchema.properties;

/** The headings `--help` and docs/configuration.md list the options under, every option in one. */
export const optionGroups: Readonly<Record<string, readonly OptionKey[]>> = {
  Server: ['host', 'port', 'workers', 'baseUrl', 'corsIngestOrigins', 'listenBacklog', 'keepAliveTimeoutMs', 'latestRequestParser', 'headersTimeoutMs', 'requestTimeoutMs', 'shutdownTimeoutMs', 'shutdownRetryJitterMs'],
  'Log output': ['logLevel', 'logFormat'],
  'Demo stream': ['streamId', 'streamTitle', 'intervalSeconds', 'facilities', 'seed'],
  'Stream logs': ['log', 'dataDir', 'retainedElements', 'retainedSeconds', 'pageElements', 'logSyncIntervalMs', 'logMaxPendingBytes', 'logCacheBytes', 'historyCacheBytes', 'historyGraceSeconds', 'logRetentionIntervalMs'],
  'Shared logs (Redis, Valkey)': ['redisUrl', 'redisKeyPrefix', 'redisWaitReplicas', 'redisAppendTimeoutMs', 'redisReadBlockMs', 'sourceLeaseMs'],
  'SSE and notifications': [
    'catchUpBatchElements',
    'heartbeatMs',
    'sseRetryMs',
    'maxSubscribers',
    'maxSubscriberQueueBytes',
    'subscriberStallTimeoutMs',
    'subscriberProgressCheckMs',
    'subscriberSendQueueReader',
    'broadcastBatchSize',
    'maxNotificationChannels',
    'notificationChannelTtlSeconds',
    'notificationSubscriptionMaxBodyBytes',
  ],
  WebSocket: ['wsMaxPayloadBytes', 'wsPongTimeoutMs', 'wsCloseTimeoutMs'],
  'Polling limits': ['maxLongPollWaiters', 'maxLongPollWaitSeconds', 'microCacheSeconds', 'negotiationCacheEntries', 'maxDescribedResources'],
  Ingest: ['ingestMaxBodyBytes', 'ingestMaxDiscardBytes', 'ingestMaxTriples', 'ingestMaxLiteralChars', 'ingestMaxIriChars', 'ingestMaxJsonDepth', 'ingestMaxPendingValidations', 'idempotencyKeysRetained', 'idempotencyKeyTtlSeconds'],
  Sources: ['webApiMaxBodyBytes', 'mqttMaxPayloadBytes', 'replayMaxFileBytes', 'sourceRetryInitialMs', 'sourceRetryMaxMs', 'mqttReconnectMs', 'mqttConnectTimeoutMs'],
  'SPARQL endpoint': ['sparqlTimeoutMs', 'sparqlMaxResults', 'sparqlMaxQueued', 'sparqlMaxElements', 'sparqlCacheElements', 'sparqlCacheQuads', 'sparqlMaxQueryBytes'],
  'Load shedding': ['maxEventLoopTurnMs', 'shedHoldMs', 'maxEventLoopDelayMs', 'maxHeapUsedBytes', 'maxRssBytes', 'pressureRetryAfterSeconds'],
};

export { defaults };
