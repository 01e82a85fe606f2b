/**
 * Every limit of the publisher, as a named default whose name carries its unit.
 * `docs/configuration.md` documents each one; the schema in `config-schema.ts` refers to these.
 */
export const defaults = Object.freeze({
  host: '127.0.0.1',
  /** HTTP worker processes; more than 1 uses node:cluster (the primary runs the source). */
  workers: 1,
  port: 8080,
  logLevel: 'info',
  /** `auto`: readable lines on a terminal, JSON lines when stdout is a pipe or a file. */
  logFormat: 'auto',

  streamId: 'parking',
  streamTitle: 'Park-and-ride facilities: available spaces',
  /** One element every 5 s, as in the reference study. */
  intervalSeconds: 5,
  /** 13 facilities give a Turtle element of about 5.3 kB (the study's document: 5.2 kB). */
  facilities: 13,
  seed: 1,

  /**
   * `file`: every stream's log on disk under `dataDir`; `memory`: lost at exit (tests, demos);
   * `redis`: in Redis or Valkey Streams at `redisUrl`, shared by every instance on that server.
   */
  log: 'file',
  /** The server of the shared logs (`log: redis`): Redis or Valkey 7.2 or later (WAITAOF). */
  redisUrl: 'redis://127.0.0.1:6379',
  /** A stream's keys are `{redisKeyPrefix}:{stream-id}:…` (one hash tag per stream: `{…}`). */
  redisKeyPrefix: 'rdf-stream',
  /** Replicas that must have an append on disk (WAITAOF) before ingest answers, besides the server (count). */
  redisWaitReplicas: 0,
  /** Milliseconds an append waits for WAITAOF before ingest answers 503 (the element may still be kept: a retry with its Idempotency-Key finds it). */
  redisAppendTimeoutMs: 5_000,
  /** Milliseconds one XREAD BLOCK of a stream's log waits; finite, so that a lost connection is found. */
  redisReadBlockMs: 2_000,
  /** Milliseconds a source's lease lasts unrenewed (renewed every third of it): the fail-over time. */
  sourceLeaseMs: 5_000,
  /** Where the logs live (one folder per stream), relative to the working directory (or to the configuration file that sets it). */
  dataDir: 'data',
  /** Elements a stream's log keeps at least (count): about a week at the default interval, ~180 MB. */
  retainedElements: 100_000,
  /** Age limit of a stream's log (seconds; 0: none): whole pages older than this are removed. */
  retainedSeconds: 0,
  /** Elements per history page and per segment file of the log (count), fixed when a log is created. */
  pageElements: 100,
  /** Least milliseconds between two syncs of a log; appends made meanwhile share the next (group commit). */
  logSyncIntervalMs: 0,
  /** Bytes of appends waiting for their sync, per stream; more are refused (503) until the disk catches up. */
  logMaxPendingBytes: 64 * 1024 * 1024,
  /** Decoded elements kept in memory per stream for catch-up and history reads (bytes). */
  logCacheBytes: 64 * 1024 * 1024,
  /** Rendered closed history pages kept in memory, all streams and formats together (bytes). */
  historyCacheBytes: 32 * 1024 * 1024,
  /**
   * Seconds a history page removed by retention still answers (a node leading to the oldest
   * retained page) before 410, and the longest a cache may keep the history root and time
   * index: a root or index read from a cache never leads a client to a 410.
   */
  historyGraceSeconds: 3_600,
  /** Milliseconds between background retention passes. */
  logRetentionIntervalMs: 60_000,
  /** Elements read from the log at a time for one catching-up SSE subscriber (count). */
  catchUpBatchElements: 64,
  heartbeatMs: 15_000,
  /** `retry:` sent to EventSource clients on connect. */
  sseRetryMs: 2_000,
  maxSubscribers: 50_000,
  /**
   * Bytes a subscriber's client may leave unacknowledged (queued in the process, and held by the
   * kernel where `subscriberProgressCheckMs` can read it) before it is evicted.
   */
  maxSubscriberQueueBytes: 512 * 1024,
  /**
   * Milliseconds a subscriber's socket may refuse data (its kernel buffers are full) without
   * draining before it is evicted, during catch-up as when live: what a reader that stopped
   * reading holds is bounded in time as well as in bytes.
   */
  subscriberStallTimeoutMs: 10_000,
  /**
   * Milliseconds between two checks of what the clients of push connections (SSE, notification
   * receivers, held long-polls) acknowledged, the bytes the kernel holds for them counted (one
   * read of /proc/net/tcp per check; 0: off, only refused writes are watched). A reader that
   * stopped reading is evicted at most `subscriberStallTimeoutMs` + this after its last
   * acknowledgement, or this after its unacknowledged bytes pass `maxSubscriberQueueBytes`.
   */
  subscriberProgressCheckMs: 1_000,
  /**
   * How those checks read kernel send queues: `auto`, each outstanding socket's with
   * `ioctl(SIOCOUTQ)` where the optional `koffi` dependency loads (Linux), else one read of
   * `/proc/net/tcp` per check; `table`, always `/proc/net/tcp`.
   */
  subscriberSendQueueReader: 'auto' as const,
  /** Subscribers written per event-loop turn during a broadcast. */
  broadcastBatchSize: 500,
  /**
   * Largest frame a data WebSocket client may send (bytes): it should send nothing but pongs and
   * its close frame (control frames hold at most 125 bytes). A larger frame is closed 1009 (by
   * `ws`, before it is buffered whole); any data message is closed 1008.
   */
  wsMaxPayloadBytes: 1_024,
  /**
   * Milliseconds a data WebSocket may take to answer a ping (sent every `heartbeatMs`) before
   * its connection is cut without a closing handshake: a peer gone without a FIN, or not reading.
   */
  wsPongTimeoutMs: 20_000,
  /**
   * Milliseconds the server waits for the client's answer to its close frame (shutdown, shed,
   * eviction) before cutting the connection: bounds what a client that stopped reading holds
   * after it was told to go, and keeps a shutdown within `shutdownTimeoutMs`.
   */
  wsCloseTimeoutMs: 2_000,
  /** Solid notification channels (EventSourceChannel2023) open at once, all streams together (count). */
  maxNotificationChannels: 10_000,
  /** Longest life of a notification channel (seconds); a subscription's `endAt` may only shorten it. */
  notificationChannelTtlSeconds: 86_400,
  /** Largest subscription request body (bytes). */
  notificationSubscriptionMaxBodyBytes: 16 * 1024,
  maxLongPollWaiters: 10_000,
  maxLongPollWaitSeconds: 60,
  /** Micro-cache for streams without a regular interval, or whose next element is overdue. */
  microCacheSeconds: 1,
  /** Distinct Accept / Accept-Encoding header values whose negotiation result is memoised. */
  negotiationCacheEntries: 1_000,
  /**
   * Sensors and features of interest per stream whose description (`/streams/{id}/sensors/…`,
   * `…/facilities/…`) is kept (count): the least recently mentioned is forgotten first (404).
   */
  maxDescribedResources: 10_000,

  /**
   * Idle keep-alive connections are closed after this long. Longer than any freshness the
   * publisher announces, so that polling clients reuse their connection instead of racing its
   * close (Node's default is 5 s, exactly the demo stream's interval).
   */
  keepAliveTimeoutMs: 65_000,
  latestRequestParser: 'direct' as const,
  /**
   * Connections the kernel may hold accepted-but-not-yet-taken (count): Node's default of 511
   * overflows when a crowd connects at once (SYNs dropped, clients wait 1, 3, 7 s to retry).
   * Linux caps it at `net.core.somaxconn` (4096 by default since 5.4); start-up warns if lower.
   */
  listenBacklog: 4_096,
  /**
   * Origins whose browser scripts may ingest (POST to a stream) and read `/metrics`,
   * comma-separated (`*`: any). Empty: none. Reads are open to every origin whatever this says.
   */
  corsIngestOrigins: '',
  /**
   * Milliseconds a client may take to send a request's headers, and its whole request (headers
   * and body): a client that stops half-way is answered 408 and cut, instead of holding a
   * connection (and an ingest's `Idempotency-Key`) for Node's default of five minutes. They bound
   * receiving the request only, never an SSE stream or a long-poll's wait.
   */
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,

  /** SIGTERM: time allowed to drain subscribers and in-flight requests before exiting anyway. */
  shutdownTimeoutMs: 10_000,
  /** SIGTERM: subscribers are told to come back after a random delay up to this bound. */
  shutdownRetryJitterMs: 5_000,

  /** Ingest (`POST /streams/{id}`): largest request body, also after decompression. */
  ingestMaxBodyBytes: 1024 * 1024,
  /**
   * Ingest: bytes of a refused request's body (413, 401, 415… answered before the body was read)
   * read and thrown away so that a client writing its whole body before reading receives the
   * answer; a longer rest is not read: the connection is closed (and the client may see a reset).
   */
  ingestMaxDiscardBytes: 8 * 1024 * 1024,
  /** Ingest: most triples in one element. */
  ingestMaxTriples: 10_000,
  /** Ingest: longest literal, in characters. */
  ingestMaxLiteralChars: 65_536,
  /** Ingest: longest IRI, in characters. */
  ingestMaxIriChars: 4_096,
  /**
   * Ingest: deepest nesting of arrays and objects in a JSON-LD body (levels). An observation
   * needs about 5; the readers of JSON-LD recurse once per level, so this bounds their stack
   * (jsonld.js overflows Node's default stack at about 1 000 levels: the schema allows 256).
   */
  ingestMaxJsonDepth: 64,
  /** Ingest: SHACL validations waiting for a stream's validation thread (count); more are answered 503. */
  ingestMaxPendingValidations: 64,
  /** Ingest: answers kept per stream for `Idempotency-Key` replays (count), and for how long. */
  idempotencyKeysRetained: 10_000,
  idempotencyKeyTtlSeconds: 86_400,
  /** Sources: largest web-API response, MQTT message and replay recording. */
  webApiMaxBodyBytes: 10 * 1024 * 1024,
  mqttMaxPayloadBytes: 1024 * 1024,
  replayMaxFileBytes: 64 * 1024 * 1024,
  /** Sources: retry delays after an upstream failure (exponential, with jitter) and MQTT reconnection. */
  sourceRetryInitialMs: 1_000,
  sourceRetryMaxMs: 60_000,
  mqttReconnectMs: 1_000,
  /** Sources: how long an MQTT connection attempt may take before it counts as failed. */
  mqttConnectTimeoutMs: 10_000,


  /**
   * SPARQL endpoint (`/streams/{id}/sparql`): queries are evaluated one at a time in a worker
   * thread, so that a long one never holds up the event loop that serves the subscribers. One
   * that runs past `sparqlTimeoutMs` is stopped by terminating the thread (its caches go with
   * it); a result is held whole before it is sent, so it is bounded by `sparqlMaxResults` rows or
   * triples; `sparqlMaxQueued` queries may wait behind the running one.
   */
  sparqlTimeoutMs: 10_000,
  sparqlMaxResults: 10_000,
  sparqlMaxQueued: 16,
  /** Most elements a query's window (`?elements=N`, `?duration=`) may hold: 1 000 demo elements are ~100 000 triples. */
  sparqlMaxElements: 1_000,
  /** Elements the query thread keeps parsed (count), so that a later window over them parses nothing again: ~50 kB per demo element. */
  sparqlCacheElements: 1_000,
  /**
   * Quads of the windows' triple stores the query thread keeps built (count; each element's
   * quads count twice, in its graph and in the default graph): repeated queries on the same
   * window reuse its store. A demo element is 79 quads; an n3 Store of 1 000 of them (158 000
   * quads) takes ~170 MB, so the default keeps that one, or many small ones.
   */
  sparqlCacheQuads: 200_000,
  /** Longest query, in bytes (a POST body; a GET query string is bounded by the header size too). */
  sparqlMaxQueryBytes: 64 * 1024,
  /**
   * Shed new requests (503, connection parked) while the event loop's mean delay over half a
   * second exceeds this (ms; 0: never), and for `shedHoldMs` after: long turns starve the
   * accepting of new connections long before the delay looks alarming (see http/load-shedder.ts).
   * Above the 10 ms turns of a broadcast batch (`broadcastBatchSize` subscribers), below the
   * 50–130 ms of a flood of busy connections (measured).
   */
  maxEventLoopTurnMs: 25,
  shedHoldMs: 3_000,
  /** Load shedding by @fastify/under-pressure (0 disables a check). */
  maxEventLoopDelayMs: 1_000,
  maxHeapUsedBytes: 0,
  maxRssBytes: 0,
  pressureRetryAfterSeconds: 10,
});
