import { type ChildProcess, fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { type ElementRow, elementLatencies } from '../analyze/element-latency.js';
import { connectionKind, type ConnectionMemory, memoryPerConnection, peakSnapshot } from '../analyze/memory-per-connection.js';
import { countUpdates } from '../analyze/missed-updates.js';
import { sumCounts } from '../analyze/sum-counts.js';
import { wireBytesPerUpdate } from '../analyze/wire-bytes.js';
import { type ElementBytes, measureElementBytes } from '../collect/element-bytes.js';
import { ElementMonitor } from '../collect/element-monitor.js';
import { type MemorySnapshot, readMemorySnapshot } from '../collect/memory-snapshot.js';
import { heldPorts, readPortRange, readPortUsage, readTcpSockets } from '../collect/port-usage.js';
import { ProcessSampler, type ResourceSummary } from '../collect/process-sampler.js';
import { readSystemCounters, type SystemCounters, systemDelta } from '../collect/system-counters.js';
import { type BenchMode, burstsAcrossFleet, type GzipReading, type WorkerBurst, type WorkerJob, type WorkerProgress, type WorkerReady, type WorkerReport } from '../fleet/worker-protocol.js';
import { FleetBurstBarrier } from '../fleet/answer-burst.js';
import { gzipVerifySampleClients } from '../fleet/gzip-verify-sample.js';
import { nextMessage } from '../process/child-message.js';
import type { BenchOptions } from './bench-options.js';
import { InstanceSamplers, type InstanceResources, type RedisResources } from './instance-samplers.js';
import { MemoryWatch } from './memory-watch.js';
import { startServices, viaProxy } from './run-services.js';
import { assignSourcePorts, planSourceAddresses, type SourceAddressPlan } from './source-addresses.js';


export interface RunSummary {
  readonly mode: BenchMode;
  readonly clients: number;
  readonly connected: number;
  readonly durationSeconds: number;
  /** The stream's interval between two elements (s). */
  readonly intervalSeconds: number;
  readonly updatesPublished: number;
  readonly updatesExpected: number;
  readonly updatesReceived: number;
  readonly missedUpdates: number;
  readonly errors: number;
  /** `errors` by cause (an error code, or an answer's status and problem code), summed over the workers. */
  readonly errorCauses: Readonly<Record<string, number>>;
  readonly timeouts: number;
  readonly reconnects: number;
  readonly requests: number;
  readonly notModified: number;
  /** Over the elements published once every client was connected (the warm-up's are apart). */
  readonly latencyMs: Percentiles;
  /** Elements published after the ramp but before the last client had its first answer. */
  readonly warmupElements: number;
  readonly warmupLatencyMs: Percentiles | null;
  /** Each measured element, warm-up included: a tail that one element causes shows as such. */
  readonly perElement: ElementRow[];
  /** Bytes the server sent per delivered update, headers and framing included (see analyze/wire-bytes.ts). */
  readonly wireBytesPerUpdate: number | null;
  /** Server CPU (publisher and proxy) over the measurement, per update a client received (µs). */
  readonly serverCpuMicrosPerUpdate: number | null;
  /** The hypervisor's steal time over the measurement, in % of the machine's CPU time (Linux). */
  readonly stealPercent: number | null;
  /** Connections the kernel dropped because a listen queue was full, during the run (Linux, machine-wide). */
  readonly listenOverflows: number | null;
  readonly listenDrops: number | null;
  /** One update on the wire, read from `/latest` after the run; null when it could not be read. */
  readonly elementBytes: ElementBytes | null;
  readonly serverCpuMilli: ResourceSummary['cpuMilli'] | null;
  /** CPU time the client fleet's worker processes used from the start of the ramp to the end of the run (s). */
  readonly fleetCpuSeconds: number;
  readonly serverRssMiB: ResourceSummary['rssMiB'] | null;
  /** Where the publishers kept the stream's log, and how many instances served it. */
  readonly log: BenchOptions['log'];
  readonly serverInstances: number;
  /** Each publisher instance apart (the `server` figures are their sum, with the proxy's). */
  readonly instances: readonly InstanceResources[];
  /** Log redis: the server the instances shared. */
  readonly redis?: RedisResources;
  /** The 127.0.0.x addresses the clients connected from. */
  readonly sourceAddresses: readonly string[];
  /** Addresses passed over: too few of their ports were free (open or in TIME_WAIT) for their share. */
  readonly sourceAddressesSkipped: SourceAddressPlan['skipped'];
  readonly proxy: BenchOptions['proxy'];
  readonly pollStrategy?: BenchOptions['pollStrategy'];
  readonly sseEncoding?: BenchOptions['sseEncoding'];
  readonly websocketClient?: BenchOptions['websocketClient'];
  readonly httpClient?: BenchOptions['httpClient'];
  /**
   * The server the fleet subscribed to when it was not the publisher (`--peer nchan`): the
   * `server` figures are then its worker process's, and latency runs from its publish request.
   */
  readonly peer?: 'nchan';
  /** The machine's load average (1, 5, 15 min) when the run started: other work on the machine. */
  readonly loadAverage: readonly [number, number, number];
  /** The publisher's memory with no client, with every client idle, and at its peak; null with `--target`. */
  readonly memory: RunMemory | null;
  /** `--sse-encoding gzip` only: how the clients read the compressed streams, and the sample's check. */
  readonly gzipReading?: GzipReading;
  /** Connected clients and updates received so far, once per second from the start of the ramp. */
  readonly timeline: Array<{ readonly seconds: number; readonly connected: number; readonly updates: number }>;
  /** The 10 % sample of raw latencies: [seq, latencyMs]. */
  readonly samples: Array<[number, number]>;
}

/** One memory reading as `summary.json` gives it. */
export interface MemoryReading {
  /** Seconds from the end of the ramp (negative: before it). */
  readonly secondsAfterRamp: number;
  readonly connected: number;
  readonly serverRssMiB: number;
  /** `/proc/net/sockstat`, machine-wide: TCP sockets in use and their buffers; null off Linux. */
  readonly tcpSockets: number | null;
  readonly tcpBufferKiB: number | null;
}

/** A run's memory: readings, and the cost per connection derived from them (`analyze/memory-per-connection.ts`). */
export interface RunMemory {
  /** What one connection of the run is: `SSE subscriber`, `long-poll waiter`, `WebSocket`, … */
  readonly connection: string;
  /** The publisher started, the run's monitor connected, no client yet. */
  readonly baseline: MemoryReading;
  /** Every client connected (or half the measurement gone), between two updates; null if no element came. */
  readonly idle: MemoryReading | null;
  /** The peak of each figure over the measurement (read every 500 ms): connections with updates in flight. */
  readonly active: MemoryReading | null;
  readonly perConnection: { readonly idle: ConnectionMemory | null; readonly active: ConnectionMemory | null };
  /** The raw readings, for the slope across runs of several sizes (not written to summary.json). */
  readonly snapshots: { readonly baseline: MemorySnapshot; readonly idle: MemorySnapshot | null; readonly active: MemorySnapshot | null };
}

export interface Percentiles {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/** Above this much steal time, the machine's figures are the hypervisor's as much as ours (%). */
export const STEAL_WARNING_PERCENT = 15;

export type ProgressListener = (state: { elapsedSeconds: number; totalSeconds: number; connected: number; updates: number }) => void;

/**
 * Runs one measured configuration: starts the services, watches what is published, runs the
 * fleet through its ramp and measurement, and accounts for every update.
 */
export async function runOne(options: BenchOptions, mode: BenchMode, clients: number, onProgress: ProgressListener): Promise<RunSummary> {
  // Before anything starts: a fleet that cannot have its ports fails here, saying why, not half-connected.
  const range = readPortRange();
  const sources = planSourceAddresses({ clients, clientsPerAddress: options.clientsPerSourceAddress, candidates: options.sourceAddresses, range, usage: readPortUsage(range) });
  const services = await startServices(options, mode, clients);
  try {
    const sampler = services.pids.length > 0 ? new ProcessSampler([...services.pids]) : undefined;
    const instanceSamplers = new InstanceSamplers(services);
    const monitor = new ElementMonitor();
    await monitor.start(services.directUrl);
    sampler?.start();
    instanceSamplers.start();
    const startCounters = readSystemCounters();
    const loadAverage = loadavg().map((value) => Math.round(value * 100) / 100) as [number, number, number];
    const baseline = services.pids.length > 0 ? readMemorySnapshot([...services.pids], 0) : null;
    const fleet = await startFleet(options, mode, clients, services.clientUrls, sources);
    const { measureFromMs } = fleet;
    const memoryWatch =
      baseline === null
        ? undefined
        : new MemoryWatch({
            pids: [...services.pids],
            clients,
            measureFromMs,
            measureUntilMs: measureFromMs + options.durationSeconds * 1000,
            intervalSeconds: options.intervalSeconds,
            connected: fleet.connected,
            published: () => monitor.published.size,
          });
    let measureCounters: SystemCounters | null = null;
    const atMeasureStart = setTimeout(() => (measureCounters = readSystemCounters()), Math.max(0, measureFromMs - Date.now()));
    const timeline = await followProgress(fleet, options.rampSeconds + options.durationSeconds, onProgress);
    clearTimeout(atMeasureStart);
    memoryWatch?.stop();
    const connected = fleet.connected();
    const endedAt = Date.now();
    const endCounters = readSystemCounters();
    const reports = await fleet.stop();
    const elementBytes = await measureElementBytes(services.directUrl).catch(() => null);
    const resources = await sampler?.stop();
    const shared = await instanceSamplers.stop((index) => dealt(clients, services.clientUrls.length, index));
    const serverCpuMs = sampler?.cpuTimeBetween(measureFromMs, endedAt) ?? null;
    monitor.stop();
    const system = { steal: systemDelta(measureCounters, endCounters), listen: systemDelta(startCounters, endCounters) };
    const memory = baseline === null || memoryWatch === undefined ? null : runMemory(mode, options, baseline, memoryWatch.idle, peakSnapshot(memoryWatch.during), measureFromMs);
    return summarise({ options, mode, clients, connected, reports, resources, serverCpuMs, system, elementBytes, published: services.published ?? monitor.published, measureFromMs, endedAt, timeline, loadAverage, memory, shared, sources });
  } finally {
    await services.stop();
  }
}

function runMemory(mode: BenchMode, options: BenchOptions, baseline: MemorySnapshot, idle: MemorySnapshot | null, active: MemorySnapshot | null, measureFromMs: number): RunMemory {
  const reading = (snapshot: MemorySnapshot): MemoryReading => ({
    secondsAfterRamp: Math.round((snapshot.atMs - measureFromMs) / 100) / 10,
    connected: snapshot.connected,
    serverRssMiB: Math.round((snapshot.serverRssBytes / 1_048_576) * 10) / 10,
    tcpSockets: snapshot.tcpInUse,
    tcpBufferKiB: snapshot.tcpMemBytes === null ? null : Math.round(snapshot.tcpMemBytes / 1024),
  });
  return {
    connection: connectionKind({ mode, sseEncoding: options.sseEncoding, websocketClient: options.websocketClient, proxy: viaProxy(mode) ? options.proxy : 'none', peer: options.peer }),
    baseline: reading(baseline),
    idle: idle === null ? null : reading(idle),
    active: active === null ? null : reading(active),
    perConnection: {
      idle: idle === null ? null : memoryPerConnection(baseline, idle),
      active: active === null ? null : memoryPerConnection(baseline, active),
    },
    snapshots: { baseline, idle, active },
  };
}

/** The gzip readings of every worker, summed; undefined when no worker read a gzip stream. */
function gzipReadings(reports: readonly WorkerReport[]): GzipReading | undefined {
  const readings = reports.map((report) => report.gzip).filter((reading) => reading !== null);
  if (readings.length === 0) return undefined;
  const sum = (key: keyof GzipReading) => readings.reduce((total, reading) => total + reading[key], 0);
  return {
    verifyClients: sum('verifyClients'),
    verified: sum('verified'),
    mismatches: sum('mismatches'),
    piecesInflated: sum('piecesInflated'),
    pieces: sum('pieces'),
    compressedBytes: sum('compressedBytes'),
  };
}

/** How many of `clients` the fleet deals to the `index`th of `targets` (client i goes to target i mod targets). */
export const dealt = (clients: number, targets: number, index: number) => Math.floor(clients / targets) + (index < clients % targets ? 1 : 0);

/** Most a client worker may take to load before the run fails (milliseconds). */
const WORKER_START_TIMEOUT_MS = 120_000;

/**
 * Forks the client workers and, once every one has loaded (under load that takes seconds, which
 * must not eat into the ramp), gives each its job: `clients` spread over them, the ramp starting now.
 */
async function startFleet(options: BenchOptions, mode: BenchMode, clients: number, streamUrls: readonly string[], sources: SourceAddressPlan) {
  const processes = Math.max(1, Math.min(options.clientProcesses, clients));
  const progress = new Map<ChildProcess, WorkerProgress>();
  const workers = Array.from({ length: processes }, () =>
    fork(fileURLToPath(new URL('../fleet/client-worker.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx', ...(options.clientCpuProfDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', options.clientCpuProfDir])], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
  await Promise.all(workers.map((worker) => workerReady(worker)));
  // Each client's port, from what is free on its address now (a single address is not bound).
  const range = readPortRange();
  const sourcePorts =
    sources.addresses.length > 1 ? assignSourcePorts({ clients, instances: streamUrls.length, addresses: sources.addresses, range, held: heldPorts(readTcpSockets(), range) }) : [];
  const measureFromMs = Date.now() + options.rampSeconds * 1000;
  // Long-pollers' next requests go when every worker has read its answers (`AnswerBurst`).
  const barrier = burstsAcrossFleet(mode) ? new FleetBurstBarrier(workers) : undefined;
  let first = 0;
  workers.forEach((worker, index) => {
    const count = Math.floor(clients / processes) + (index < clients % processes ? 1 : 0);
    const job: WorkerJob = {
      mode,
      streamUrls,
      clients: count,
      firstClient: first,
      totalClients: clients,
      rampMs: options.rampSeconds * 1000,
      pollIntervalMs: options.pollIntervalMs,
      pollStrategy: options.pollStrategy,
      sseEncoding: options.sseEncoding,
      gzipVerifyClients: gzipVerifySampleClients(options.gzipVerifySample, clients),
      websocketClient: options.websocketClient,
      httpClient: options.httpClient,
      localAddresses: sources.addresses,
      sourcePorts: sourcePorts.slice(first, first + count),
      sampleRate: 0.1,
      requestTimeoutMs: 10_000,
      measureFromMs,
    };
    first += count;
    worker.on('message', (message: WorkerProgress | WorkerReport | WorkerBurst) => {
      if (message.type === 'progress') progress.set(worker, message);
      else if (message.type === 'burst') {
        if (message.state === 'over') barrier?.over(worker);
        else barrier?.withdrawn(worker);
      }
    });
    worker.send(job);
  });
  const total = (key: 'connected' | 'updates') => [...progress.values()].reduce((sum, value) => sum + value[key], 0);
  return {
    measureFromMs,
    connected: () => total('connected'),
    updates: () => total('updates'),
    /** Asks every worker to stop; resolves with their reports. */
    stop: () =>
      Promise.all(
        workers.map((worker) => {
          const report = nextMessage<WorkerReport>(worker, 'reported', (message) => (message as WorkerProgress | WorkerReport).type === 'report');
          worker.send('stop');
          return report;
        }),
      ),
  };
}

function workerReady(worker: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`a client worker did not load within ${WORKER_START_TIMEOUT_MS} ms`)), WORKER_START_TIMEOUT_MS);
    worker.on('message', (message: WorkerReady | WorkerProgress | WorkerReport) => {
      if (message.type !== 'ready') return;
      clearTimeout(timer);
      resolve();
    });
    worker.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`a client worker exited with ${code} before it loaded`));
    });
  });
}

/** Reports progress every 500 ms until `totalSeconds` have passed; returns the per-second timeline. */
function followProgress(
  fleet: { connected(): number; updates(): number },
  totalSeconds: number,
  onProgress: ProgressListener,
): Promise<RunSummary['timeline']> {
  const startedAt = Date.now();
  const timeline: RunSummary['timeline'] = [];
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      const elapsedSeconds = Math.min(totalSeconds, (Date.now() - startedAt) / 1000);
      const state = { elapsedSeconds, totalSeconds, connected: fleet.connected(), updates: fleet.updates() };
      onProgress(state);
      const second = Math.floor(elapsedSeconds);
      if (timeline.at(-1)?.seconds !== second) timeline.push({ seconds: second, connected: state.connected, updates: state.updates });
      if (elapsedSeconds >= totalSeconds) {
        clearInterval(timer);
        resolve(timeline);
      }
    }, 500);
  });
}

/** Merges the workers' reports and accounts for every update published in the measured window. */
function summarise(run: {
  readonly options: BenchOptions;
  readonly mode: BenchMode;
  readonly clients: number;
  readonly connected: number;
  readonly reports: readonly WorkerReport[];
  readonly resources: ResourceSummary | undefined;
  /** Server CPU time over the measurement (ms). */
  readonly serverCpuMs: number | null;
  /** Steal over the measurement; listen-queue drops over the whole run, ramp included. */
  readonly system: { readonly steal: ReturnType<typeof systemDelta>; readonly listen: ReturnType<typeof systemDelta> };
  readonly elementBytes: ElementBytes | null;
  readonly published: ReadonlyMap<number, number>;
  readonly measureFromMs: number;
  readonly endedAt: number;
  readonly timeline: RunSummary['timeline'];
  readonly loadAverage: RunSummary['loadAverage'];
  readonly memory: RunMemory | null;
  readonly shared: { readonly instances: InstanceResources[]; readonly redis: RedisResources | undefined };
  readonly sources: SourceAddressPlan;
}): RunSummary {
  const { options, mode, reports, published, measureFromMs, endedAt } = run;
  // Warm-up ends when the last client had its first answer (never before the end of the ramp).
  const allConnectedAtMs = Math.max(measureFromMs, ...reports.flatMap((report) => report.clients.map((client) => client.connectedAt ?? 0)));
  const latencies = elementLatencies(reports.map((report) => report.elements), measureFromMs, allConnectedAtMs);
  const updatesMeasured = latencies.perElement.reduce((sum, row) => sum + row.received, 0);
  const sum = (key: 'errors' | 'timeouts' | 'reconnects' | 'requests' | 'notModified') => reports.reduce((total, report) => total + report[key], 0);
  const accounting = countUpdates(published, reports.flatMap((report) => report.clients), measureFromMs, endedAt, Math.max(2_000, options.pollIntervalMs * 2));
  const inWindow = [...published.values()].filter((time) => time >= measureFromMs && time <= endedAt).length;
  const round = (value: number) => Math.round(value * 10) / 10;
  const percentiles = (summary: Percentiles): Percentiles => ({ p50: round(summary.p50), p90: round(summary.p90), p99: round(summary.p99), max: round(summary.max), mean: round(summary.mean) });
  return {
    mode,
    clients: run.clients,
    connected: run.connected,
    durationSeconds: options.durationSeconds,
    intervalSeconds: options.intervalSeconds,
    updatesPublished: inWindow,
    updatesExpected: accounting.expected,
    updatesReceived: accounting.received,
    missedUpdates: accounting.missed,
    errors: sum('errors'),
    errorCauses: sumCounts(reports.map((report) => report.errorCauses)),
    timeouts: sum('timeouts'),
    reconnects: sum('reconnects'),
    requests: sum('requests'),
    notModified: sum('notModified'),
    latencyMs: percentiles(latencies.headline),
    warmupElements: latencies.warmupElements,
    warmupLatencyMs: latencies.warmup === null ? null : percentiles(latencies.warmup),
    perElement: latencies.perElement,
    // A peer frames the element its own way: the publisher's sizes are not its own.
    wireBytesPerUpdate: options.peer === undefined ? wireBytesPerUpdate(mode, run.elementBytes, { requests: sum('requests'), notModified: sum('notModified') }, options.sseEncoding) : null,
    serverCpuMicrosPerUpdate: run.serverCpuMs === null || updatesMeasured === 0 ? null : Math.round((run.serverCpuMs * 1000) / updatesMeasured),
    stealPercent: run.system.steal.stealPercent,
    listenOverflows: run.system.listen.listenOverflows,
    listenDrops: run.system.listen.listenDrops,
    elementBytes: options.peer === undefined ? run.elementBytes : null,
    serverCpuMilli: run.resources?.cpuMilli ?? null,
    fleetCpuSeconds: Math.round(reports.reduce((total, report) => total + report.cpuSeconds, 0) * 100) / 100,
    serverRssMiB: run.resources?.rssMiB ?? null,
    log: options.log,
    serverInstances: options.target === undefined ? options.serverInstances : 1,
    instances: run.shared.instances,
    ...(run.shared.redis === undefined ? {} : { redis: run.shared.redis }),
    sourceAddresses: run.sources.addresses,
    sourceAddressesSkipped: run.sources.skipped,
    proxy: viaProxy(mode) ? options.proxy : 'none',
    ...(mode === 'poll' ? { pollStrategy: options.pollStrategy } : {}),
    ...(mode === 'sse' ? { sseEncoding: options.sseEncoding } : {}),
    ...(mode === 'websocket' ? { websocketClient: options.websocketClient } : {}),
    ...(mode === 'long-poll' || mode === 'poll' ? { httpClient: options.httpClient } : {}),
    ...(options.peer === undefined ? {} : { peer: options.peer }),
    loadAverage: run.loadAverage,
    memory: run.memory,
    ...(mode === 'sse' && options.sseEncoding === 'gzip' ? { gzipReading: gzipReadings(reports) } : {}),
    timeline: run.timeline,
    samples: reports.flatMap((report) => report.samples),
  };
}
