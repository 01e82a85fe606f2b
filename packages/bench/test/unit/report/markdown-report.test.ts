import { describe, expect, it } from 'vitest';
import { markdownReport } from '../../../src/report/write-results.js';
import type { RunSummary } from '../../../src/scenario/run-benchmark.js';

const percentiles = (p50: number, p99: number) => ({ p50, p90: p99, p99, max: p99, mean: p50 });
const run = (log: 'file' | 'redis', p50: number, p99: number): RunSummary =>
  ({
    mode: 'sse', sseEncoding: 'identity', proxy: 'none', clients: 2000, connected: 2000, durationSeconds: 30, intervalSeconds: 5,
    updatesPublished: 6, updatesExpected: 12_000, updatesReceived: 12_000, missedUpdates: 0, errors: 0, errorCauses: {}, timeouts: 0, reconnects: 0,
    requests: 0, notModified: 0, latencyMs: percentiles(p50, p99), warmupElements: 0, warmupLatencyMs: null, perElement: [],
    wireBytesPerUpdate: 6090, serverCpuMicrosPerUpdate: 80, stealPercent: 0, listenOverflows: 0, listenDrops: 0, elementBytes: null,
    serverCpuMilli: { mean: 100, max: 300 }, fleetCpuSeconds: 3, serverRssMiB: { mean: 300, max: 350 },
    log, serverInstances: log === 'redis' ? 2 : 1,
    instances: (log === 'redis' ? [18_900, 18_901] : [18_900]).map((port) => ({ url: `http://127.0.0.1:${port}/streams/parking`, clients: log === 'redis' ? 1000 : 2000, cpuMilli: { mean: 50, max: 150 }, rssMiB: { mean: 150, max: 170 } })),
    ...(log === 'redis' ? { redis: { url: 'redis://127.0.0.1:40000', appendfsync: 'everysec', cpuMilli: { mean: 2, max: 10 }, rssMiB: { mean: 7.6, max: 7.7 }, usedMemoryMiB: 1.3, usedMemoryPeakMiB: 1.4 } } : {}),
    sourceAddresses: ['127.0.0.1', '127.0.0.2'], sourceAddressesSkipped: [], loadAverage: [1, 1, 1], memory: null, timeline: [], samples: [],
  }) as RunSummary;

describe('markdownReport', () => {
  it('gives the runs, each instance and Redis, and the latency the shared log added, as Markdown tables', () => {
    const report = markdownReport('pnpm bench --compare-log file,redis', [run('file', 20, 60), run('redis', 24, 75)]);
    expect(report).toContain('| sse (identity) | 2000 |');
    expect(report).toContain('| sse (identity) on 2 × redis | 2000 | publisher 2 (127.0.0.1:18901) | 1000 | 50 (max 150) | 150 (max 170) |  |');
    expect(report).toContain('| sse (identity) on 2 × redis | 2000 | redis 127.0.0.1:40000 (appendfsync everysec) |  | 2 (max 10) | 7.6 (max 7.7) | 1.3 (1.4) |');
    expect(report).toContain('| sse (identity) | 2000 | 20 / 60 | 2 × 24 / 75 | +4 | +15 |');
  });

  it('leaves the instance and comparison sections out for a run on one file log', () => {
    const report = markdownReport('pnpm bench', [run('file', 20, 60)]);
    expect(report).not.toContain('## Publisher instances');
    expect(report).not.toContain('## Latency added');
  });

  it('names the source addresses a run passed over, short of ports', () => {
    const skipped = { ...run('file', 20, 60), sourceAddresses: ['127.0.0.2', '127.0.0.3'], sourceAddressesSkipped: [{ address: '127.0.0.1', freePorts: 900 }] };
    expect(markdownReport('pnpm bench', [skipped])).toContain(
      '- sse (identity), 2000 clients: passed over 127.0.0.1 (900 ports free), short of ports for a share of the clients (open or in TIME_WAIT).',
    );
  });
});
