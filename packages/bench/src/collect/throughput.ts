import { mediaTypes } from '@rdf-stream/protocol';
import { cpus } from 'node:os';
import autocannon from 'autocannon';

export interface ThroughputResult {
  readonly url: string;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly requestsPerSecond: number;
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly timeouts: number;
  readonly errors: number;
  readonly non2xx: number;
  /** CPU of this process (the load generator shares the machine), milli-CPU: all its threads. */
  readonly loadGeneratorCpuMilli: number;
  /** autocannon's threads: 1, or its worker threads (`--throughput-threads`). */
  readonly loadGeneratorThreads: number;
  /**
   * The load generator used at least 90 % of the cores its threads can use: the figure is its
   * limit, not the server's (autocannon's thread is single-threaded JavaScript).
   */
  readonly loadGeneratorBound: boolean;
}

/** Of the CPU its threads can use, what the load generator must use to count as the bottleneck. */
const LOAD_GENERATOR_BOUND_FRACTION = 0.9;

/**
 * The study's wrk run, with autocannon: keep-alive GETs of `url` for `durationSeconds`, from one
 * thread or from `threads` worker threads of autocannon's own (connections split among them).
 */
export async function measureThroughput(url: string, connections: number, durationSeconds: number, threads = 1): Promise<ThroughputResult> {
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  const result = await autocannon({
    url,
    connections,
    duration: durationSeconds,
    headers: { accept: mediaTypes.turtle },
    ...(threads > 1 ? { workers: threads } : {}),
  });
  const cpu = process.cpuUsage(cpuBefore);
  const elapsedMs = performance.now() - startedAt;
  const loadGeneratorCpuMilli = Math.round(((cpu.user + cpu.system) / 1000 / elapsedMs) * 1000);
  return {
    url,
    connections,
    durationSeconds,
    requestsPerSecond: Math.round(result.requests.average),
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
    timeouts: result.timeouts,
    errors: result.errors,
    non2xx: result.non2xx,
    loadGeneratorCpuMilli,
    loadGeneratorThreads: threads,
    loadGeneratorBound: loadGeneratorCpuMilli >= LOAD_GENERATOR_BOUND_FRACTION * 1000 * Math.min(threads, cpus().length),
  };
}
