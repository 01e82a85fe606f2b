import { describe, expect, it } from 'vitest';
import { peerComparison, peerComparisonTable } from '../../../src/report/peer-comparison.js';

const run = (overrides: Record<string, unknown>) => ({
  mode: 'sse' as const,
  clients: 10_000,
  latencyMs: { p50: 40, p90: 80, p99: 120, max: 200, mean: 45 },
  missedUpdates: 0,
  serverCpuMicrosPerUpdate: 30,
  serverRssMiB: { mean: 400, max: 420 },
  proxy: 'none' as const,
  sseEncoding: 'identity' as const,
  log: 'file' as const,
  serverInstances: 1,
  ...overrides,
});

describe('the publisher beside nchan', () => {
  it('pairs each nchan run with the publisher\'s identity SSE run of the same client count, publisher ÷ nchan', () => {
    const publisher = run({});
    const nchan = run({ peer: 'nchan', latencyMs: { p50: 50, p90: 90, p99: 150, max: 300, mean: 55 }, serverCpuMicrosPerUpdate: 40, serverRssMiB: { mean: 100, max: 110 } });
    const rows = peerComparison([publisher, run({ sseEncoding: 'gzip' }), run({ clients: 2000 }), nchan, run({ peer: 'nchan', clients: 500 })]);
    expect(rows).toEqual([
      {
        peer: 'nchan',
        clients: 10_000,
        publisher: { p50: 40, p99: 120, missedUpdates: 0, cpuMicrosPerUpdate: 30, rssMiB: { mean: 400, max: 420 } },
        nchan: { p50: 50, p99: 150, missedUpdates: 0, cpuMicrosPerUpdate: 40, rssMiB: { mean: 100, max: 110 } },
        ratio: { p50: 0.8, p99: 0.8, cpuMicrosPerUpdate: 0.75, rssMiB: 4 },
      },
    ]);
    expect(peerComparisonTable(rows)).toMatch(/10000 +40 \/ 120 +30 +400 \(max 420\) +50 \/ 150 +40 +100 \(max 110\) +0\.75 +0\.8 +0\.8 +4/);
  });

  it('gives no ratio for a figure a side did not measure', () => {
    const [row] = peerComparison([run({ serverCpuMicrosPerUpdate: null }), run({ peer: 'nchan' })]);
    expect(row?.ratio.cpuMicrosPerUpdate).toBeNull();
  });
});
