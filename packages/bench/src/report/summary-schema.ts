import { FormatRegistry, type Static, type TSchema, Type } from '@sinclair/typebox';

if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set('date-time', (value) => /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value)));
}

const percentiles = Type.Object({ p50: Type.Number(), p90: Type.Number(), p99: Type.Number(), max: Type.Number(), mean: Type.Number() });
const meanMax = Type.Object({ mean: Type.Number({ minimum: 0 }), max: Type.Number({ minimum: 0 }) });
const count = Type.Integer({ minimum: 0 });
const loadAverage = Type.Array(Type.Number({ minimum: 0 }), { minItems: 3, maxItems: 3 });
const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const memoryReading = Type.Object({
  secondsAfterRamp: Type.Number(),
  connected: count,
  serverRssMiB: Type.Number({ minimum: 0 }),
  tcpSockets: nullable(count),
  tcpBufferKiB: nullable(count),
});
/** Differences of machine-wide readings: may be negative when other work released memory meanwhile. */
const connectionMemory = Type.Object({
  serverRssKiB: Type.Number(),
  tcpKernelKiBBothEnds: nullable(Type.Number()),
  tcpKernelKiBPerSide: nullable(Type.Number()),
  tcpSocketsPerConnection: nullable(Type.Number()),
});

/** One side of `peerComparison`: the publisher's run or the peer's. */
const peerSide = Type.Object({
  p50: Type.Number(),
  p99: Type.Number(),
  missedUpdates: count,
  cpuMicrosPerUpdate: nullable(Type.Number({ minimum: 0 })),
  rssMiB: nullable(meanMax),
});

/** The schema of `summary.json` (documented in docs/bench.md). */
export const SummarySchema = Type.Object({
  command: Type.String(),
  startedAt: Type.String({ format: 'date-time' }),
  machine: Type.Object({ cores: count, memoryGiB: count, node: Type.String(), platform: Type.String(), loadAverage: loadAverage }),
  runs: Type.Array(
    Type.Object({
      mode: Type.Union([Type.Literal('poll'), Type.Literal('sse'), Type.Literal('long-poll'), Type.Literal('websocket')]),
      pollStrategy: Type.Optional(Type.Union([Type.Literal('fixed'), Type.Literal('smart'), Type.Literal('smart-hold')])),
      sseEncoding: Type.Optional(Type.Union([Type.Literal('identity'), Type.Literal('gzip')])),
      websocketClient: Type.Optional(Type.Union([Type.Literal('lean'), Type.Literal('ws')])),
      httpClient: Type.Optional(Type.Union([Type.Literal('lean'), Type.Literal('undici')])),
      peer: Type.Optional(Type.Literal('nchan')),
      proxy: Type.Union([Type.Literal('none'), Type.Literal('nginx'), Type.Literal('varnish')]),
      clients: Type.Integer({ minimum: 1 }),
      connected: count,
      durationSeconds: Type.Number({ exclusiveMinimum: 0 }),
      intervalSeconds: Type.Number({ exclusiveMinimum: 0 }),
      updatesPublished: count,
      updatesExpected: count,
      updatesReceived: count,
      missedUpdates: count,
      errors: count,
      errorCauses: Type.Record(Type.String(), count),
      timeouts: count,
      reconnects: count,
      requests: count,
      notModified: count,
      latencyMs: percentiles,
      warmupElements: count,
      warmupLatencyMs: Type.Union([percentiles, Type.Null()]),
      perElement: Type.Array(
        Type.Object({
          seq: Type.Integer({ minimum: 1 }),
          generatedAtSeconds: Type.Number(),
          warmup: Type.Boolean(),
          received: count,
          p50: Type.Number(),
          p99: Type.Number(),
          max: Type.Number(),
        }),
      ),
      wireBytesPerUpdate: Type.Union([count, Type.Null()]),
      serverCpuMicrosPerUpdate: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
      stealPercent: Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()]),
      listenOverflows: Type.Union([count, Type.Null()]),
      listenDrops: Type.Union([count, Type.Null()]),
      elementBytes: Type.Union([
        Type.Object({ identity: count, gzip: count, headers200: count, response304: count, sseEvent: count, sseEventGzip: Type.Union([count, Type.Null()]), websocketFrame: Type.Union([count, Type.Null()]) }),
        Type.Null(),
      ]),
      serverCpuMilli: Type.Union([meanMax, Type.Null()]),
      fleetCpuSeconds: Type.Number({ minimum: 0 }),
      serverRssMiB: Type.Union([meanMax, Type.Null()]),
      log: Type.Union([Type.Literal('file'), Type.Literal('redis')]),
      serverInstances: Type.Integer({ minimum: 1 }),
      instances: Type.Array(Type.Object({ url: Type.String(), clients: count, cpuMilli: meanMax, rssMiB: meanMax })),
      redis: Type.Optional(
        Type.Object({
          url: Type.String(),
          appendfsync: nullable(Type.Union([Type.Literal('always'), Type.Literal('everysec'), Type.Literal('no')])),
          cpuMilli: nullable(meanMax),
          rssMiB: nullable(meanMax),
          usedMemoryMiB: nullable(Type.Number({ minimum: 0 })),
          usedMemoryPeakMiB: nullable(Type.Number({ minimum: 0 })),
        }),
      ),
      sourceAddresses: Type.Array(Type.String({ pattern: '^127\\.0\\.0\\.\\d{1,3}$' }), { minItems: 1 }),
      sourceAddressesSkipped: Type.Array(Type.Object({ address: Type.String(), freePorts: count })),
      loadAverage,
      memory: nullable(
        Type.Object({
          connection: Type.String(),
          baseline: memoryReading,
          idle: nullable(memoryReading),
          active: nullable(memoryReading),
          perConnection: Type.Object({ idle: nullable(connectionMemory), active: nullable(connectionMemory) }),
        }),
      ),
      gzipReading: Type.Optional(
        Type.Object({ verifyClients: count, verified: count, mismatches: count, piecesInflated: count, pieces: count, compressedBytes: count }),
      ),
      timeline: Type.Array(Type.Object({ seconds: count, connected: count, updates: count })),
    }),
  ),
  memoryPerConnection: Type.Array(
    Type.Object({
      connection: Type.String(),
      clients: Type.Array(Type.Integer({ minimum: 1 })),
      idle: nullable(connectionMemory),
      active: nullable(connectionMemory),
      idleSlope: nullable(connectionMemory),
    }),
  ),
  throughput: Type.Optional(
    Type.Object({
      url: Type.String(),
      connections: count,
      durationSeconds: Type.Number(),
      requestsPerSecond: Type.Number({ minimum: 0 }),
      latencyMs: Type.Object({ p50: Type.Number(), p99: Type.Number(), max: Type.Number() }),
      timeouts: count,
      errors: count,
      non2xx: count,
      loadGeneratorCpuMilli: Type.Number({ minimum: 0 }),
      loadGeneratorThreads: Type.Integer({ minimum: 1 }),
      loadGeneratorBound: Type.Boolean(),
      viaProxy: Type.Optional(Type.Object({ requestsPerSecond: Type.Number({ minimum: 0 }) }, { additionalProperties: true })),
      proxyRatio: Type.Optional(Type.Number()),
    }),
  ),
  logComparison: Type.Optional(
    Type.Array(
      Type.Object({
        run: Type.String(),
        clients: Type.Integer({ minimum: 1 }),
        redisInstances: Type.Integer({ minimum: 1 }),
        file: Type.Object({ p50: Type.Number(), p99: Type.Number(), missedUpdates: count }),
        redis: Type.Object({ p50: Type.Number(), p99: Type.Number(), missedUpdates: count }),
        addedMs: Type.Object({ p50: Type.Number(), p99: Type.Number() }),
      }),
    ),
  ),
  peerComparison: Type.Optional(
    Type.Array(
      Type.Object({
        peer: Type.Literal('nchan'),
        clients: Type.Integer({ minimum: 1 }),
        publisher: peerSide,
        nchan: peerSide,
        ratio: Type.Object({ p50: nullable(Type.Number()), p99: nullable(Type.Number()), cpuMicrosPerUpdate: nullable(Type.Number()), rssMiB: nullable(Type.Number()) }),
      }),
    ),
  ),
  goals: Type.Optional(
    Type.Array(
      Type.Object({
        goal: Type.String(),
        run: Type.String(),
        clients: Type.Integer({ minimum: 1 }),
        figure: Type.Union([Type.Number(), Type.Null()]),
        reference: Type.Union([Type.String(), Type.Null()]),
        referenceFigure: Type.Union([Type.Number(), Type.Null()]),
        value: Type.Union([Type.Number(), Type.Null()]),
        bound: Type.Number(),
        met: Type.Union([Type.Boolean(), Type.Null()]),
        missing: Type.Optional(Type.String()),
      }),
    ),
  ),
  capacityPlan: Type.Object({
    inputs: Type.Object({
      cpuMicrosPerUpdate: Type.Object({
        sse: Type.Union([Type.Number(), Type.Null()]),
        'sse-gzip': Type.Union([Type.Number(), Type.Null()]),
        'long-poll': Type.Union([Type.Number(), Type.Null()]),
        websocket: Type.Union([Type.Number(), Type.Null()]),
      }),
      pollRequestsPerSecond: Type.Union([Type.Number(), Type.Null()]),
      bytes: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
      ran: Type.Optional(Type.Array(Type.Union([Type.Literal('sse'), Type.Literal('sse-gzip'), Type.Literal('websocket'), Type.Literal('long-poll')]))),
    }),
    assumptions: Type.Array(Type.String()),
    rows: Type.Array(
      Type.Object({
        transport: Type.Union([Type.Literal('sse'), Type.Literal('sse-gzip'), Type.Literal('websocket'), Type.Literal('long-poll'), Type.Literal('poll')]),
        malSeconds: Type.Union([Type.Number(), Type.Null()]),
        clients: count,
        intervalSeconds: Type.Number({ exclusiveMinimum: 0 }),
        cores: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
        coresNote: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
        gbitPerSecond: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
      }),
    ),
  }),
  mal: Type.Optional(
    Type.Object({
      table: Type.Array(Type.Object({ malSeconds: Type.Number(), maxUsers: count })),
      cutoffSeconds: Type.Union([Type.Number(), Type.Null()]),
      advice: Type.String(),
    }),
  ),
});

export type Summary = Static<typeof SummarySchema>;
