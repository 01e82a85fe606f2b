import { mediaTypes } from '@rdf-stream/protocol';
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
  /** CPU of this process (the load generator shares the machine), milli-CPU. */
  readonly loadGeneratorCpuMilli: number;
}

/** The study's wrk run, with autocannon: keep-alive GETs of `url` for `durationSeconds`. */
export async function measureThroughput(url: string, connections: number, durationSeconds: number): Promise<ThroughputResult> {
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  const result = await autocannon({ url, connections, duration: durationSeconds, headers: { accept: mediaTypes.turtle } });
  const cpu = process.cpuUsage(cpuBefore);
  const elapsedMs = performance.now() - startedAt;
  return {
    url,
    connections,
    durationSeconds,
    requestsPerSecond: Math.round(result.requests.average),
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
    timeouts: result.timeouts,
    errors: result.errors,
    non2xx: result.non2xx,
    loadGeneratorCpuMilli: Math.round(((cpu.user + cpu.system) / 1000 / elapsedMs) * 1000),
  };
}
