import { connect, type Socket } from 'node:net';
import { streamIri, streamPath, streamResources } from '@rdf-stream/protocol';
import { freePort } from '../free-port.js';
import { kernelQueuedBytes, metricSum, percentile, rssBytes, Sampler, tcpMemoryBytes } from '../process-probe.js';
import { RestartablePublisher } from '../restartable-publisher.js';
import { check, timedCheck, progress, type ScenarioResult, sleep } from '../scenario-result.js';
import { SseFleet } from '../sse-fleet.js';

export interface StalledOptions {
  readonly stalled: number;
  readonly healthy: number;
  /** Seconds the run without stalled readers lasts (the healthy subscribers' baseline p99). */
  readonly baselineSeconds: number;
  /** Seconds the run with the stalled readers lasts: long enough for each to be evicted. */
  readonly runSeconds: number;
  readonly intervalSeconds: number;
  /** Observations per element: sets the element size (13, the default: a ~5.3 kB Turtle element). */
  readonly facilities: number;
}

/**
 * At the demo stream's default element size and `--interval 1` (~5.5 kB/s), with the default
 * limits: a reader that stops reading is told apart from one that reads only once its own
 * receive buffer is full (~128 kB: its kernel acknowledges what it receives, ~24 s at this rate),
 * then evicted within `subscriberStallTimeoutMs` (10 s) and one check.
 */
export const stalledDefaults: StalledOptions = { stalled: 1_000, healthy: 200, baselineSeconds: 60, runSeconds: 90, intervalSeconds: 1, facilities: 13 };
export const stalledShort: StalledOptions = { stalled: 200, healthy: 100, baselineSeconds: 15, runSeconds: 45, intervalSeconds: 1, facilities: 13 };

/** The healthy subscribers' p99 with stalled readers beside them may be at most this much above it without. */
const HEALTHY_P99_RATIO = 1.2;
/**
 * What the kernel may hold for one stalled reader: its own receive buffer (~128 KiB, the
 * default `tcp_rmem`) plus what its sender queues during `subscriberStallTimeoutMs` and one
 * check (~60 KiB at ~5.5 kB/s), with room to spare; unbounded, it grows to megabytes.
 */
const KERNEL_KIB_PER_STALLED = 256;
const KERNEL_SAMPLE_MS = 5_000;
/** Stalled readers connected at a time (a quarter of a second apart). */
const STALLED_BATCH = 100;
const GENERATED_AT = /prov#generatedAtTime> "([^"]+)"|prov:generatedAtTime "([^"]+)"/;

interface Run {
  readonly healthyLatenciesMs: number[];
  readonly healthyLatenciesWhileStalledMs: number[];
  readonly healthyLatenciesAfterEvictionMs: number[];
  readonly evicted: number;
  readonly evictionReasons: string;
  /** Seconds from the stalled readers' connection to the last eviction (undefined: not all were). */
  readonly allEvictedAfterSeconds: number | undefined;
  readonly firstEvictedAfterSeconds: number | undefined;
  readonly maxRssBytes: number;
  readonly maxTcpMemoryBytes: number;
  /** The most the kernel held per stalled connection (server send queue + client receive queue). */
  readonly maxKernelBytesPerStalled: number;
  /** Stalled readers the publisher counted as subscribers (the rest were refused or shed). */
  readonly stalledSubscribed: number;
  readonly stalledStillOpen: number;
  readonly healthyMissing: number;
}

/** One run: healthy subscribers (latency measured) and, if asked, raw sockets that never read. */
async function run(options: StalledOptions, stalledCount: number, seconds: number): Promise<Run> {
  const port = await freePort();
  const publisher = new RestartablePublisher({
    port,
    flags: [
      '--log', 'memory',
      '--interval', String(options.intervalSeconds),
      '--facilities', String(options.facilities),
      '--max-subscribers', String(options.stalled + options.healthy + 100),
    ],
  });
  await publisher.start();
  const latencies: number[] = [];
  /** When each latency was measured (ms on the performance clock), to split the run in phases. */
  const measuredAt: number[] = [];
  const fleet = new SseFleet({
    eventsUrl: streamResources(streamIri(publisher.url, 'parking')).events,
    subscribers: options.healthy,
    onElement: (_subscriber, _seq, text, receivedAt) => {
      const match = GENERATED_AT.exec(text);
      const generatedAt = match?.[1] ?? match?.[2];
      if (generatedAt === undefined) return;
      latencies.push(receivedAt - Date.parse(generatedAt));
      measuredAt.push(performance.now());
    },
  });
  const stalled: Socket[] = [];
  const clientPorts = new Set<number>();
  const rss = new Sampler(() => rssBytes(publisher.pid));
  const tcp = new Sampler(tcpMemoryBytes);
  // Every 5 s: reading the whole table costs the kernel ~3.5 µs a line (tens of ms with
  // thousands of connections), on the cores the publisher and the healthy clients share.
  const kernelPerStalled = new Sampler(() => {
    if (clientPorts.size === 0) return 0;
    const queued = kernelQueuedBytes(port, clientPorts);
    return queued.connections === 0 ? 0 : (queued.serverSendBytes + queued.clientReceiveBytes) / queued.connections;
  }, KERNEL_SAMPLE_MS);
  try {
    await fleet.start();
    await openStalledReaders(port, stalledCount, stalled, clientPorts);
    const connectedAt = performance.now();
    const subscribed = async () => metricSum(await (await fetch(`${publisher.url}/metrics`)).text(), 'rdf_stream_subscribers');
    const subscribedBy = Date.now() + 30_000;
    while ((await subscribed()) < options.healthy + stalledCount && Date.now() < subscribedBy) await sleep(100);
    const stalledSubscribed = (await subscribed()) - options.healthy;
    const evictions = await followEvictions(publisher, seconds, connectedAt, stalledCount, kernelPerStalled);
    const lastSeq = Math.max(...fleet.subscribers.map((subscriber) => subscriber.lastSeq));
    await fleet.reached(lastSeq, 30_000).catch((error: Error) => progress('stalled', error.message));
    const metrics = await (await fetch(`${publisher.url}/metrics`)).text();
    const connected = metricSum(metrics, 'rdf_stream_subscribers');
    const evicted = metricSum(metrics, 'rdf_stream_subscribers_evicted_total');
    const after = (count: number) => {
      const reached = evictions.find((sample) => sample.evicted >= count);
      return reached === undefined || count === 0 ? undefined : Math.round(reached.atMs / 100) / 10;
    };
    return {
      healthyLatenciesMs: latencies,
      // While every stalled reader was still connected, and once the last was evicted.
      healthyLatenciesWhileStalledMs: latencies.filter((_, index) => (measuredAt[index] as number) - connectedAt < (after(1) ?? seconds) * 1000),
      healthyLatenciesAfterEvictionMs: latencies.filter((_, index) => (measuredAt[index] as number) - connectedAt > (after(stalledCount) ?? seconds) * 1000),
      evicted,
      evictionReasons: [...metrics.matchAll(/^rdf_stream_subscribers_evicted_total\{[^}]*reason="(\w+)"[^}]*\} (\d+)/gm)].map((match) => `${match[1]} ${match[2]}`).join(', '),
      allEvictedAfterSeconds: stalledCount > 0 && evicted >= stalledCount ? after(stalledCount) : undefined,
      firstEvictedAfterSeconds: after(1),
      maxRssBytes: rss.max,
      maxTcpMemoryBytes: tcp.max,
      maxKernelBytesPerStalled: kernelPerStalled.max,
      stalledSubscribed,
      stalledStillOpen: connected - options.healthy,
      healthyMissing: fleet.losses(lastSeq).missing,
    };
  } finally {
    rss.stop();
    tcp.stop();
    kernelPerStalled.stop();
    for (const socket of stalled) socket.destroy();
    await fleet.stop();
    await publisher.dispose();
  }
}

/**
 * Opens `count` readers that never read: the request, then not one byte read (the default
 * format, Turtle). In batches, so that the crowd is not shed (a shed request's connection is closed).
 */
async function openStalledReaders(port: number, count: number, stalled: Socket[], clientPorts: Set<number>): Promise<void> {
  for (let index = 0; index < count; index++) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.on('connect', () => clientPorts.add(socket.localPort ?? 0));
    socket.write(`GET ${streamPath('parking', 'events')} HTTP/1.1\r\nHost: reliability\r\nAccept: text/event-stream\r\n\r\n`);
    socket.pause();
    stalled.push(socket);
    if (index % STALLED_BATCH === STALLED_BATCH - 1) await sleep(250);
  }
}

/**
 * Reads the publisher's eviction count every second for `seconds` (each sample timed from
 * `connectedAt`), saying every 10 s where memory stands.
 */
async function followEvictions(
  publisher: RestartablePublisher,
  seconds: number,
  connectedAt: number,
  stalledCount: number,
  kernelPerStalled: Sampler,
): Promise<Array<{ atMs: number; evicted: number }>> {
  const evictions: Array<{ atMs: number; evicted: number }> = [];
  const deadline = Date.now() + seconds * 1_000;
  let lastReport = 0;
  while (Date.now() < deadline) {
    await sleep(Math.min(1_000, deadline - Date.now()));
    const metrics = await (await fetch(`${publisher.url}/metrics`)).text();
    evictions.push({ atMs: performance.now() - connectedAt, evicted: metricSum(metrics, 'rdf_stream_subscribers_evicted_total') });
    if (Date.now() - lastReport >= 10_000) {
      lastReport = Date.now();
      progress('stalled', `${stalledCount} stalled: ${Math.round((deadline - Date.now()) / 1000)} s left; ${evictions.at(-1)?.evicted} evicted; publisher RSS ${Math.round(rssBytes(publisher.pid) / 1_048_576)} MiB, kernel TCP memory ${Math.round(tcpMemoryBytes() / 1_048_576)} MiB, ${Math.round(kernelPerStalled.samples.at(-1)?.value ?? 0) / 1000} kB in the kernel per stalled reader`);
    }
  }
  return evictions;
}

/**
 * Stalled readers: subscribers that never read a byte, beside healthy ones. Guards against a
 * reader that stopped reading holding memory for ever (in the process and in the kernel's
 * socket buffers) and slowing everyone else's broadcast.
 */
export async function stalledScenario(options: StalledOptions = stalledDefaults): Promise<ScenarioResult> {
  const started = performance.now();
  progress('stalled', `baseline: ${options.healthy} healthy subscribers for ${options.baselineSeconds} s`);
  const baseline = await run(options, 0, options.baselineSeconds);
  progress('stalled', `then ${options.stalled} stalled readers beside ${options.healthy} healthy ones for ${options.runSeconds} s`);
  const withStalled = await run(options, options.stalled, options.runSeconds);
  const p99 = (values: number[]) => Math.round(percentile(values, 99));
  const baselineP99 = p99(baseline.healthyLatenciesMs);
  const stalledP99 = p99(withStalled.healthyLatenciesMs);
  const mib = (bytes: number) => Math.round(bytes / 1_048_576);
  return {
    name: 'stalled',
    weakness: 'readers that stop reading hold memory for ever and slow the broadcast to everyone',
    seconds: Math.round((performance.now() - started) / 1000),
    figures: {
      stalled: options.stalled,
      healthy: options.healthy,
      stalledSubscribed: withStalled.stalledSubscribed,
      evicted: withStalled.evicted,
      evictionReasons: withStalled.evictionReasons,
      firstEvictedAfterSeconds: withStalled.firstEvictedAfterSeconds ?? 'none',
      allEvictedAfterSeconds: withStalled.allEvictedAfterSeconds ?? 'not all',
      maxKernelKiBPerStalled: Math.round(withStalled.maxKernelBytesPerStalled / 1024),
      healthyP99Ms: stalledP99,
      baselineP99Ms: baselineP99,
      healthyP99WhileStalledMs: p99(withStalled.healthyLatenciesWhileStalledMs),
      healthyP99AfterEvictionMs: p99(withStalled.healthyLatenciesAfterEvictionMs),
      maxRssMiB: mib(withStalled.maxRssBytes),
      baselineMaxRssMiB: mib(baseline.maxRssBytes),
      maxKernelTcpMiB: mib(withStalled.maxTcpMemoryBytes),
      baselineMaxKernelTcpMiB: mib(baseline.maxTcpMemoryBytes),
    },
    checks: [
      check(
        `every stalled reader evicted within ${options.runSeconds} s at the default limits`,
        withStalled.stalledSubscribed === options.stalled && withStalled.evicted >= options.stalled && withStalled.stalledStillOpen <= 0,
        `${withStalled.stalledSubscribed} subscribed, ${withStalled.evicted} evicted (${withStalled.evictionReasons || 'none'}), ${Math.max(0, withStalled.stalledStillOpen)} still open`,
      ),
      check(
        `the kernel holds at most ${KERNEL_KIB_PER_STALLED} KiB per stalled reader (its receive buffer, then what piles up during the stall timeout)`,
        withStalled.maxKernelBytesPerStalled <= KERNEL_KIB_PER_STALLED * 1024,
        `${Math.round(withStalled.maxKernelBytesPerStalled / 1024)} KiB`,
      ),
      check('healthy subscribers lost nothing', withStalled.healthyMissing === 0 && baseline.healthyMissing === 0, `${withStalled.healthyMissing} missing`),
      timedCheck(
        `healthy p99 within ${HEALTHY_P99_RATIO}× of a run without stalled readers`,
        stalledP99 <= Math.max(baselineP99 * HEALTHY_P99_RATIO, baselineP99 + 10),
        `${stalledP99} ms against ${baselineP99} ms`,
      ),
      check('publisher RSS bounded (not growing with what stalled readers refuse)', withStalled.maxRssBytes <= baseline.maxRssBytes + 256 * 1_048_576, `${mib(withStalled.maxRssBytes)} MiB against ${mib(baseline.maxRssBytes)} MiB`),
    ],
  };
}
