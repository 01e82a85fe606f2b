import { connect, type Socket } from 'node:net';
import { freePort } from '../free-port.js';
import { metricSum, percentile, rssBytes, Sampler, tcpMemoryBytes } from '../process-probe.js';
import { PublisherProcess } from '../publisher-process.js';
import { check, timedCheck, progress, type ScenarioResult, sleep } from '../scenario-result.js';
import { SseFleet } from '../sse-fleet.js';

export interface StalledOptions {
  readonly stalled: number;
  readonly healthy: number;
  /** Seconds each of the two runs (without, then with the stalled readers) lasts. */
  readonly runSeconds: number;
  readonly intervalSeconds: number;
  /** Observations per element: sets the element size (≈ 1.2 kB of N-Triples each). */
  readonly facilities: number;
  readonly stallTimeoutMs: number;
}

export const stalledDefaults: StalledOptions = { stalled: 1_000, healthy: 1_000, runSeconds: 150, intervalSeconds: 1, facilities: 30, stallTimeoutMs: 10_000 };
export const stalledShort: StalledOptions = { stalled: 50, healthy: 50, runSeconds: 15, intervalSeconds: 0.25, facilities: 100, stallTimeoutMs: 2_000 };

/** The healthy subscribers' p99 with stalled readers beside them may be at most this much above it without. */
const HEALTHY_P99_RATIO = 1.2;
const GENERATED_AT = /prov#generatedAtTime> "([^"]+)"/;

interface Run {
  readonly healthyLatenciesMs: number[];
  readonly evicted: number;
  readonly maxRssBytes: number;
  readonly maxTcpMemoryBytes: number;
  readonly stalledStillOpen: number;
  readonly healthyMissing: number;
}

/** One run: healthy subscribers (latency measured) and, if asked, readers that never read. */
async function run(options: StalledOptions, stalledCount: number): Promise<Run> {
  const publisher = new PublisherProcess({
    port: await freePort(),
    flags: [
      '--log', 'memory',
      '--interval', String(options.intervalSeconds),
      '--facilities', String(options.facilities),
      '--max-subscribers', String(options.stalled + options.healthy + 100),
      '--subscriber-stall-timeout-ms', String(options.stallTimeoutMs),
    ],
  });
  await publisher.start();
  const latencies: number[] = [];
  const fleet = new SseFleet({
    eventsUrl: `${publisher.url}/streams/parking/events`,
    subscribers: options.healthy,
    onElement: (_subscriber, _seq, text, receivedAt) => {
      const generatedAt = GENERATED_AT.exec(text)?.[1];
      if (generatedAt !== undefined) latencies.push(receivedAt - Date.parse(generatedAt));
    },
  });
  const stalled: Socket[] = [];
  const rss = new Sampler(() => rssBytes(publisher.pid));
  const tcp = new Sampler(tcpMemoryBytes);
  try {
    await fleet.start();
    for (let index = 0; index < stalledCount; index++) {
      const socket = connect(Number(new URL(publisher.url).port), '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write('GET /streams/parking/events?format=ntriples HTTP/1.1\r\nHost: reliability\r\nAccept: text/event-stream\r\n\r\n');
      socket.pause();
      stalled.push(socket);
    }
    const deadline = Date.now() + options.runSeconds * 1_000;
    while (Date.now() < deadline) {
      await sleep(Math.min(10_000, deadline - Date.now()));
      progress('stalled', `${stalledCount} stalled: ${Math.round((deadline - Date.now()) / 1000)} s left; publisher RSS ${Math.round(rssBytes(publisher.pid) / 1_048_576)} MiB, kernel TCP memory ${Math.round(tcpMemoryBytes() / 1_048_576)} MiB`);
    }
    const lastSeq = Math.max(...fleet.subscribers.map((subscriber) => subscriber.lastSeq));
    await fleet.reached(lastSeq, 30_000).catch((error: Error) => progress('stalled', error.message));
    const metrics = await (await fetch(`${publisher.url}/metrics`)).text();
    const connected = metricSum(metrics, 'rdf_stream_subscribers');
    return {
      healthyLatenciesMs: latencies,
      evicted: metricSum(metrics, 'rdf_stream_subscribers_evicted_total'),
      maxRssBytes: rss.max,
      maxTcpMemoryBytes: tcp.max,
      stalledStillOpen: connected - options.healthy,
      healthyMissing: fleet.losses(lastSeq).missing,
    };
  } finally {
    rss.stop();
    tcp.stop();
    for (const socket of stalled) socket.destroy();
    await fleet.stop();
    await publisher.dispose();
  }
}

/**
 * Stalled readers: subscribers that never read a byte, beside healthy ones. Guards against a
 * reader that stopped reading holding memory for ever (in the process and in the kernel's
 * socket buffers) and slowing everyone else's broadcast.
 */
export async function stalledScenario(options: StalledOptions = stalledDefaults): Promise<ScenarioResult> {
  const started = performance.now();
  progress('stalled', `baseline: ${options.healthy} healthy subscribers for ${options.runSeconds} s`);
  const baseline = await run(options, 0);
  progress('stalled', `then ${options.stalled} stalled readers beside ${options.healthy} healthy ones`);
  const withStalled = await run(options, options.stalled);
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
      evicted: withStalled.evicted,
      healthyP99Ms: stalledP99,
      baselineP99Ms: baselineP99,
      maxRssMiB: mib(withStalled.maxRssBytes),
      baselineMaxRssMiB: mib(baseline.maxRssBytes),
      maxKernelTcpMiB: mib(withStalled.maxTcpMemoryBytes),
      baselineMaxKernelTcpMiB: mib(baseline.maxTcpMemoryBytes),
    },
    checks: [
      check('every stalled reader evicted', withStalled.evicted >= options.stalled && withStalled.stalledStillOpen <= 0, `${withStalled.evicted} evicted, ${Math.max(0, withStalled.stalledStillOpen)} still open`),
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
