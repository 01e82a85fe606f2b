import { describe, expect, it } from 'vitest';
import { goalRows, goalTable } from '../../../src/report/goals.js';

const run = (overrides: Record<string, unknown>) => ({
  mode: 'sse' as const,
  clients: 8000,
  latencyMs: { p50: 100, p90: 200, p99: 400, max: 500, mean: 120 },
  serverCpuMicrosPerUpdate: 30,
  requests: 0,
  connected: 8000,
  updatesPublished: 6,
  proxy: 'none' as const,
  log: 'file' as const,
  serverInstances: 1,
  ...overrides,
});

const sse = run({ sseEncoding: 'identity' });
const fixed = run({ mode: 'poll', pollStrategy: 'fixed', latencyMs: { ...sse.latencyMs, p99: 1_000 }, serverCpuMicrosPerUpdate: 110, requests: 160_000 });
const smart = run({ mode: 'poll', pollStrategy: 'smart', latencyMs: { ...sse.latencyMs, p99: 800 }, serverCpuMicrosPerUpdate: 60, requests: 74_400 });

describe('the goals of a run, beside the run they are measured against', () => {
  it('holds smart polling to fixed polling and to SSE at the same client count, and to its requests per update', () => {
    const rows = goalRows([sse, fixed, smart]);
    expect(rows.map((row) => [row.goal, row.value, row.met])).toEqual([
      ['smart polling: p99 ≤ fixed polling’s', 0.8, true],
      ['smart polling: p99 ≤ 1.5 × SSE’s', 2, false],
      ['smart polling: ≤ 1.2 requests per update per client', 1.55, false],
      ['smart polling: server CPU per update ≤ ½ fixed polling’s', 0.55, false],
    ]);
    expect(goalTable(rows)).toMatch(/smart polling: p99 ≤ 1\.5 × SSE’s +poll \(smart\) +8000 +800 +sse \(identity\): 400 +× 2 +≤ × 1\.5 +NO/);
  });

  it('names the run to add when the reference is missing, or measured at another client count or on another log', () => {
    const longPoll = run({ mode: 'long-poll', latencyMs: { ...sse.latencyMs, p99: 500 }, serverCpuMicrosPerUpdate: 50 });
    expect(goalRows([longPoll, run({ sseEncoding: 'identity', clients: 2000 }), run({ sseEncoding: 'identity', log: 'redis', serverInstances: 2 })])).toEqual([
      expect.objectContaining({ goal: 'long-poll: p99 ≤ 1.5 × SSE’s', met: null, missing: 'add --mode sse --clients 8000 to the same invocation' }),
      expect.objectContaining({ goal: 'long-poll: server CPU per update ≤ 2 × SSE’s', met: null }),
    ]);
    expect(goalRows([longPoll, sse]).map((row) => [row.value, row.met])).toEqual([
      [1.25, true],
      [1.67, true],
    ]);
  });

  it('holds gzip SSE to identity SSE, and leaves runs without goals (or behind a proxy) out', () => {
    const gzip = run({ sseEncoding: 'gzip', latencyMs: { ...sse.latencyMs, p99: 392 } });
    expect(goalRows([sse, gzip]).map((row) => [row.run, row.value, row.met])).toEqual([['sse (gzip)', 0.98, true]]);
    expect(goalRows([sse, run({ mode: 'websocket' }), run({ mode: 'poll', pollStrategy: 'smart', proxy: 'nginx' })])).toEqual([]);
  });

  it('holds the publisher\'s SSE CPU per update to nchan\'s when the invocation ran the peer, and never asks for the peer otherwise', () => {
    const nchan = run({ sseEncoding: 'identity', peer: 'nchan', serverCpuMicrosPerUpdate: 40 });
    expect(goalRows([sse, nchan]).map((row) => [row.goal, row.run, row.reference, row.value, row.met])).toEqual([['SSE CPU ≤ 0.7 × nchan’s', 'sse (identity)', 'sse (identity) on nchan', 0.75, false]]);
    expect(goalRows([run({ sseEncoding: 'identity', clients: 2000 }), nchan])).toEqual([
      expect.objectContaining({ goal: 'SSE CPU ≤ 0.7 × nchan’s', clients: 2000, met: null, missing: 'add --mode sse --peer nchan --clients 2000 to the same invocation' }),
    ]);
  });
});
