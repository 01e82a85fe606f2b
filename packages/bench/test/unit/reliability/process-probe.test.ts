import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TcpSocketEntry } from '../../../src/collect/port-usage.js';
import { floorOf, kernelQueuedBytes, metricSum, percentile, Sampler, trendOf } from '../../../src/reliability/process-probe.js';

const HOUR_MS = 3_600_000;

describe('kernelQueuedBytes', () => {
  const socket = (port: number, remotePort: number, sendQueueBytes: number, receiveQueueBytes: number, established = true): TcpSocketEntry => ({
    address: '127.0.0.1',
    port,
    remotePort,
    established,
    timeWait: !established,
    expiresInSeconds: 0,
    sendQueueBytes,
    receiveQueueBytes,
  });

  it("adds the server's unacknowledged bytes and the clients' unread bytes of the given clients' established connections", () => {
    const sockets = [
      // Server side of clients 50001 and 50002, and their client side.
      socket(8080, 50_001, 1_000, 0),
      socket(50_001, 8080, 0, 300),
      socket(8080, 50_002, 24, 0),
      socket(50_002, 8080, 0, 7),
      // Another client of the same server, not asked about; a connection in TIME_WAIT; another server.
      socket(8080, 50_003, 5_000, 0),
      socket(8080, 50_001, 9_999, 0, false),
      socket(9090, 50_001, 9_999, 9_999),
    ];
    expect(kernelQueuedBytes(8080, new Set([50_001, 50_002]), sockets)).toEqual({ serverSendBytes: 1_024, clientReceiveBytes: 307, connections: 2 });
  });
});

describe('trendOf', () => {
  it('gives the least-squares slope per hour; points on a line have no error', () => {
    // 1 MiB a minute: 60 MiB an hour.
    const points = Array.from({ length: 10 }, (_, minute) => ({ atMs: minute * 60_000, value: 100 + minute }));
    const trend = trendOf(points);
    expect(trend.perHour).toBeCloseTo(60, 9);
    expect(trend.standardErrorPerHour).toBeCloseTo(0, 9);
  });

  it('gives the slope\'s standard error from the residuals: (0, 0), (1 h, 2), (2 h, 2) rise 1 an hour, ± 1/√3', () => {
    const trend = trendOf([
      { atMs: 0, value: 0 },
      { atMs: HOUR_MS, value: 2 },
      { atMs: 2 * HOUR_MS, value: 2 },
    ]);
    expect(trend.perHour).toBeCloseTo(1, 9);
    expect(trend.standardErrorPerHour).toBeCloseTo(1 / Math.sqrt(3), 9);
  });

  it('finds a falling trend negative', () => {
    expect(trendOf([0, 1, 2, 3].map((hour) => ({ atMs: hour * HOUR_MS, value: 10 - 2 * hour }))).perHour).toBeCloseTo(-2, 9);
  });

  it('needs three points: with fewer, no slope and an infinite error (indistinguishable from noise)', () => {
    const two = [
      { atMs: 0, value: 0 },
      { atMs: HOUR_MS, value: 100 },
    ];
    expect(trendOf(two)).toEqual({ perHour: 0, standardErrorPerHour: Number.POSITIVE_INFINITY });
    expect(trendOf([])).toEqual({ perHour: 0, standardErrorPerHour: Number.POSITIVE_INFINITY });
    expect(trendOf([...two, { atMs: 2 * HOUR_MS, value: 200 }]).perHour).toBeCloseTo(100, 9);
  });

  it('leaves out values that are not finite, and then counts only the rest', () => {
    const points = [
      { atMs: 0, value: 0 },
      { atMs: HOUR_MS, value: Number.NaN },
      { atMs: 2 * HOUR_MS, value: 2 },
      { atMs: 3 * HOUR_MS, value: Number.POSITIVE_INFINITY },
      { atMs: 4 * HOUR_MS, value: 4 },
    ];
    expect(trendOf(points).perHour).toBeCloseTo(1, 9);
    expect(trendOf(points.slice(0, 4)).standardErrorPerHour).toBe(Number.POSITIVE_INFINITY);
  });

  it('gives no slope when every point was taken at the same moment', () => {
    expect(trendOf([1, 2, 3].map((value) => ({ atMs: 5, value })))).toEqual({ perHour: 0, standardErrorPerHour: Number.POSITIVE_INFINITY });
  });
});

describe('floorOf', () => {
  /** One sample a second over [fromMs, toMs), valued by `valueAt`. */
  const samples = (fromMs: number, toMs: number, valueAt: (atMs: number) => number) =>
    Array.from({ length: (toMs - fromMs) / 1_000 }, (_, index) => ({ atMs: fromMs + index * 1_000, value: valueAt(fromMs + index * 1_000) }));

  it('keeps the lowest point of each window, in time order, as the very point given; not the first and last windows', () => {
    // Within each 10 s window, a different value every second, lowest at its 5th second; each window 10 higher.
    const sawtooth = samples(0, 50_000, (atMs) => 100 + ((3 * (atMs / 1_000) + 5) % 10) + Math.floor(atMs / 10_000) * 10);
    const floor = floorOf([...sawtooth].reverse(), 10_000, 1_000);
    expect(floor.map((point) => point.value)).toEqual([110, 120, 130]);
    expect(floor.map((point) => point.atMs)).toEqual([15_000, 25_000, 35_000]);
    expect(floor[0]).toBe(sawtooth[15]);
  });

  it('keeps a window with a quarter of its samples (a starved sampler), and leaves out one with fewer', () => {
    const points = [
      ...samples(0, 10_000, () => 9), // the first window: left out
      ...samples(10_000, 20_000, () => 5), // whole: 10 samples
      ...samples(20_000, 23_000, () => 6), // 3 of 10: a starved sampler, kept
      ...samples(30_000, 32_000, () => 1), // 2 of 10: left out
      ...samples(40_000, 50_000, () => 7), // whole
      ...samples(50_000, 52_000, () => 0), // the last window: left out
    ];
    expect(floorOf(points, 10_000, 1_000).map((point) => point.value)).toEqual([5, 6, 7]);
  });

  it('skips values that are not finite, which neither count as samples nor make the floor', () => {
    const points = samples(0, 30_000, (atMs) => (atMs >= 10_000 && atMs < 12_000 ? Number.NaN : 50 + atMs / 1_000));
    expect(floorOf(points, 10_000, 1_000).map((point) => point.value)).toEqual([62]);
    // Two finite values left in the middle window: fewer than a quarter of its samples.
    for (const point of points) if (point.atMs >= 10_000 && point.atMs < 18_000) point.value = Number.NEGATIVE_INFINITY;
    expect(floorOf(points, 10_000, 1_000)).toEqual([]);
  });

  it('keeps the fields of the caller\'s points', () => {
    const points = samples(0, 6_000, (atMs) => atMs).map((point) => ({ ...point, label: `at ${point.atMs}` }));
    expect(floorOf(points, 2_000, 1_000)).toEqual([{ atMs: 2_000, value: 2_000, label: 'at 2000' }]);
  });
});

describe('metricSum', () => {
  const metrics = [
    '# HELP rdf_stream_subscribers Open SSE subscribers',
    '# TYPE rdf_stream_subscribers gauge',
    'rdf_stream_subscribers{stream="parking"} 12',
    'rdf_stream_subscribers{stream="traffic",path="/a b"} 30',
    'rdf_stream_subscribers_evicted_total{stream="parking"} 1000',
    'rdf_stream_events_total 7.5',
    'process_resident_memory_bytes 1.5e+08',
    '',
  ].join('\n');

  it('sums a metric over its label sets', () => {
    expect(metricSum(metrics, 'rdf_stream_subscribers')).toBe(42);
  });

  it('reads a metric without labels, in any number syntax Prometheus writes', () => {
    expect(metricSum(metrics, 'rdf_stream_events_total')).toBe(7.5);
    expect(metricSum(metrics, 'process_resident_memory_bytes')).toBe(150_000_000);
  });

  it('counts neither another metric whose name starts alike nor the HELP and TYPE lines, and gives 0 for an absent one', () => {
    expect(metricSum(metrics, 'rdf_stream_subscribers_evicted_total')).toBe(1_000);
    expect(metricSum(metrics, 'rdf_stream')).toBe(0);
    expect(metricSum(metrics, 'nothing_here')).toBe(0);
  });
});

describe('percentile', () => {
  it('is the nearest-rank percentile, and sorts the values in place', () => {
    const values = [10, 1, 9, 2, 8, 3, 7, 4, 6, 5];
    expect(percentile(values, 50)).toBe(5);
    expect(values).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(percentile(values, 90)).toBe(9);
    expect(percentile(values, 91)).toBe(10);
    expect(percentile(values, 100)).toBe(10);
    expect(percentile(values, 1)).toBe(1);
  });

  it('p = 0 is the minimum (the doc says 0–100)', () => {
    expect(percentile([3, 1, 2], 0)).toBe(1);
  });

  it('sorts numbers by value, not as strings', () => {
    expect(percentile([100, 20, 3], 50)).toBe(20);
  });

  it('is NaN for no values', () => {
    expect(percentile([], 50)).toBeNaN();
  });
});

describe('Sampler', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('samples at once and then every intervalMs until stopped, keeping the largest value', () => {
    vi.useFakeTimers();
    const values = [3, 9, 4, 7, 100];
    const sampler = new Sampler(() => values.shift()!, 1_000);
    expect(sampler.samples.map((sample) => sample.value)).toEqual([3]);
    vi.advanceTimersByTime(999);
    expect(sampler.samples).toHaveLength(1);
    vi.advanceTimersByTime(2_001);
    sampler.stop();
    vi.advanceTimersByTime(10_000);
    expect(sampler.samples.map((sample) => sample.value)).toEqual([3, 9, 4, 7]);
    expect(sampler.max).toBe(9);
    const times = sampler.samples.map((sample) => sample.atMs);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('skips a sample whose read throws (the process is gone), and goes on', () => {
    vi.useFakeTimers();
    let reads = 0;
    const sampler = new Sampler(() => {
      reads++;
      if (reads === 2) throw new Error('ENOENT /proc/123/status');
      return reads;
    }, 100);
    vi.advanceTimersByTime(200);
    sampler.stop();
    expect(sampler.samples.map((sample) => sample.value)).toEqual([1, 3]);
  });

  it('has a max of 0 before any sample succeeded', () => {
    vi.useFakeTimers();
    const sampler = new Sampler(() => {
      throw new Error('gone');
    });
    sampler.stop();
    expect(sampler.samples).toEqual([]);
    expect(sampler.max).toBe(0);
  });
});
