import { describe, expect, it } from 'vitest';
import { readSystemCounters, systemDelta } from '../../../src/collect/system-counters.js';

describe('system counters', () => {
  it('reads the machine CPU time, steal and listen-queue counters from /proc (Linux)', () => {
    const first = readSystemCounters();
    expect(first).not.toBeNull();
    expect(first!.cpuTicks).toBeGreaterThan(0);
    expect(first!.stealTicks).toBeGreaterThanOrEqual(0);
    expect(first!.stealTicks).toBeLessThanOrEqual(first!.cpuTicks);
    expect(Number.isInteger(first!.listenOverflows) && first!.listenOverflows >= 0).toBe(true);
    expect(first!.listenDrops).toBeGreaterThanOrEqual(first!.listenOverflows);
  });

  it('gives steal as a share of the machine time between two readings, and the counts that changed', () => {
    const start = { cpuTicks: 10_000, stealTicks: 100, listenOverflows: 3, listenDrops: 5 };
    const end = { cpuTicks: 12_000, stealTicks: 400, listenOverflows: 10, listenDrops: 14 };
    expect(systemDelta(start, end)).toEqual({ stealPercent: 15, listenOverflows: 7, listenDrops: 9 });
    expect(systemDelta(null, end)).toEqual({ stealPercent: null, listenOverflows: null, listenDrops: null });
  });
});
