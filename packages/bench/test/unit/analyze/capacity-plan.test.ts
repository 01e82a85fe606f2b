import { describe, expect, it } from 'vitest';
import { capacityPlan } from '../../../src/analyze/capacity-plan.js';
import { capacityTable } from '../../../src/report/capacity-table.js';

const bytes = { identity: 5_000, gzip: 500, headers200: 400, response304: 250, sseEvent: 5_600, sseEventGzip: 520, websocketFrame: 5_030 };
const plan = capacityPlan({ cpuMicrosPerUpdate: { sse: 20, 'sse-gzip': null, 'long-poll': 100, websocket: 18 }, pollRequestsPerSecond: 20_000, bytes });
const row = (transport: string, clients: number, intervalSeconds: number, malSeconds: number | null = null) =>
  plan.rows.find((r) => r.transport === transport && r.clients === clients && r.intervalSeconds === intervalSeconds && r.malSeconds === malSeconds);

describe('capacityPlan', () => {
  it('SSE: updates per second × CPU per update, and × bytes per event', () => {
    // 1 000 000 clients, an element a second: 10⁶ updates/s × 20 µs = 20 cores; × 5 600 B = 44.8 Gbit/s.
    expect(row('sse', 1_000_000, 1)).toMatchObject({ cores: 20, gbitPerSecond: 44.8 });
    expect(row('sse', 100_000, 5)).toMatchObject({ cores: 0.4, gbitPerSecond: 0.896 });
  });

  it('SSE compressed: the compressed event on the wire; the cost of a gzip run, else of the identity run', () => {
    expect(row('sse-gzip', 1_000_000, 1)).toMatchObject({ cores: 20, gbitPerSecond: 4.16 });
    const measured = capacityPlan({ cpuMicrosPerUpdate: { sse: 20, 'sse-gzip': 15, 'long-poll': 100, websocket: 18 }, pollRequestsPerSecond: 20_000, bytes });
    expect(measured.rows.find((r) => r.transport === 'sse-gzip' && r.clients === 1_000_000 && r.intervalSeconds === 1)).toMatchObject({ cores: 15 });
  });

  it('WebSocket: updates per second × its own CPU per update, and × the frame', () => {
    // 10⁶ updates/s × 18 µs = 18 cores; × 5 030 B = 40.24 Gbit/s.
    expect(row('websocket', 1_000_000, 1)).toMatchObject({ cores: 18, gbitPerSecond: 40.24 });
  });

  it('long-poll: a whole response (headers and body) per update', () => {
    expect(row('long-poll', 100_000, 1)).toMatchObject({ cores: 10, gbitPerSecond: 4.32 });
  });

  it('polling at a MAL: one request per client and MAL; only a request after a new element carries the body', () => {
    // 10⁶ clients polling every 10 s for an element every 5 s: 10⁵ req/s, every one a 200.
    expect(row('poll', 1_000_000, 5, 10)).toMatchObject({ cores: 5, gbitPerSecond: 4.32 });
    // Every 1 s for an element every 5 s: 10⁶ req/s, of which 2·10⁵ carry the element (5 400 B), the rest 304s (250 B).
    expect(row('poll', 1_000_000, 5, 1)).toMatchObject({ cores: 50, gbitPerSecond: 10.24 });
  });

  it('leaves a figure out (null) when this run did not measure what it needs, and says what it assumed', () => {
    const partial = capacityPlan({ cpuMicrosPerUpdate: { sse: null, 'sse-gzip': null, 'long-poll': null, websocket: null }, pollRequestsPerSecond: null, bytes: null });
    expect(partial.rows.every((r) => r.cores === null && r.gbitPerSecond === null)).toBe(true);
    expect(plan.assumptions.length).toBeGreaterThan(2);
    expect(capacityTable(partial)).toMatch(/cores: add a --mode sse run, Gbit\/s: the element’s bytes were not read after the run/);
    expect(partial.rows.find((r) => r.transport === 'poll')?.coresNote).toBe('add the throughput phase (--throughput-duration 30)');
  });

  it('covers 100 000 and 1 000 000 clients at 1 s and 5 s, by SSE (identity, gzip), WebSocket, long-poll and each MAL', () => {
    expect(plan.rows).toHaveLength(2 * 2 * (4 + 6));
    expect(capacityTable(plan).split('\n')[1]).toMatch(/transport\s+100,000 @ 1 s\s+100,000 @ 5 s\s+1,000,000 @ 1 s\s+1,000,000 @ 5 s/);
  });
});
