import { describe, expect, it } from 'vitest';
import { type CapacityPlan, capacityPlan } from '../../../src/analyze/capacity-plan.js';
import { MAL_SECONDS } from '../../../src/analyze/mal.js';
import { capacityCells, capacityTable } from '../../../src/report/capacity-table.js';

const bytes = { identity: 5_000, gzip: 500, headers200: 400, response304: 250, sseEvent: 5_600, sseEventGzip: 520, websocketFrame: 5_030 };
const plan = capacityPlan({ cpuMicrosPerUpdate: { sse: 20, 'sse-gzip': null, 'long-poll': 100, websocket: 18 }, pollRequestsPerSecond: 20_000, bytes });

describe('capacityCells', () => {
  it('has one column per clients × interval, after the transport', () => {
    expect(capacityCells(plan).header).toEqual(['transport', '100,000 @ 1 s', '100,000 @ 5 s', '1,000,000 @ 1 s', '1,000,000 @ 5 s']);
  });

  it('has one row per transport, and one per MAL for polling, in the plan\'s order', () => {
    expect(capacityCells(plan).rows.map((row) => row[0])).toEqual(['sse', 'sse-gzip', 'websocket', 'long-poll', ...MAL_SECONDS.map((seconds) => `poll (MAL ${seconds} s)`)]);
  });

  it('puts each row\'s cores and bandwidth under its clients and interval', () => {
    const { rows } = capacityCells(plan);
    // 10⁶ clients, an element a second: 20 µs per update → 20 cores; 5 600 B per event → 44.8 Gbit/s.
    expect(rows[0]).toEqual(['sse', '2 cores, 4.48 Gbit/s', '0.4 cores, 0.896 Gbit/s', '20 cores, 44.8 Gbit/s', '4 cores, 8.96 Gbit/s']);
    // 10⁶ clients polling every 10 s for an element every 5 s: 10⁵ req/s at 20 000 req/s per core.
    expect(rows.find((row) => row[0] === 'poll (MAL 10 s)')?.[4]).toBe('5 cores, 4.32 Gbit/s');
  });

  it('writes a measured zero as 0, and a figure this run did not measure as what it lacks, never a bare dash', () => {
    const partial: CapacityPlan = {
      inputs: plan.inputs,
      assumptions: [],
      rows: [{ transport: 'sse', malSeconds: null, clients: 100_000, intervalSeconds: 1, cores: 0, coresNote: null, gbitPerSecond: null }],
    };
    expect(capacityCells(partial).rows).toEqual([['sse', '0 cores, Gbit/s: the element’s bytes were not read after the run', '', '', '']]);
  });

  it('says which run to add for cores an invocation did not measure, per transport', () => {
    // `pnpm bench --mode websocket --throughput-duration 0`: only WebSocket's cost is known.
    const websocketOnly = capacityPlan({ cpuMicrosPerUpdate: { sse: null, 'sse-gzip': null, 'long-poll': null, websocket: 18 }, pollRequestsPerSecond: null, bytes, ran: ['websocket'] });
    const first = Object.fromEntries(capacityCells(websocketOnly).rows.map((row) => [row[0], row[1]]));
    expect(first).toMatchObject({
      sse: 'cores: add a --mode sse run, 4.48 Gbit/s',
      'sse-gzip': 'cores: add a --mode sse --sse-encoding gzip run, 0.416 Gbit/s',
      websocket: '1.8 cores, 4.024 Gbit/s',
      'long-poll': 'cores: add a --mode long-poll run, 4.32 Gbit/s',
      'poll (MAL 1 s)': 'cores: add the throughput phase (--throughput-duration 30), 4.32 Gbit/s',
    });
    expect(capacityTable(websocketOnly)).not.toMatch(/–/);
  });

  it('computes SSE from its own run when the invocation has one, and names a gzip run\'s stand-in', () => {
    // `pnpm bench --mode sse --sse-encoding gzip`: gzip measured, identity needs another invocation.
    const gzipOnly = capacityPlan({ cpuMicrosPerUpdate: { sse: null, 'sse-gzip': 15, 'long-poll': null, websocket: null }, pollRequestsPerSecond: null, bytes, ran: ['sse-gzip'] });
    const cells = Object.fromEntries(capacityCells(gzipOnly).rows.map((row) => [row[0], row[3]]));
    expect(cells['sse-gzip']).toBe('15 cores, 4.16 Gbit/s');
    expect(cells.sse).toBe('cores: add a --mode sse run (identity, another invocation), 44.8 Gbit/s');
    // `pnpm bench --mode sse`: gzip's cores from the identity run, said so.
    const identityOnly = capacityPlan({ cpuMicrosPerUpdate: { sse: 20, 'sse-gzip': null, 'long-poll': null, websocket: null }, pollRequestsPerSecond: null, bytes, ran: ['sse'] });
    expect(Object.fromEntries(capacityCells(identityOnly).rows.map((row) => [row[0], row[3]]))['sse-gzip']).toBe('20 cores (the identity SSE run’s CPU per update), 4.16 Gbit/s');
    // A run of the mode that measured nothing (no update received, or --target) says so.
    const ranButEmpty = capacityPlan({ cpuMicrosPerUpdate: { sse: null, 'sse-gzip': null, 'long-poll': null, websocket: null }, pollRequestsPerSecond: null, bytes, ran: ['long-poll'] });
    expect(capacityCells(ranButEmpty).rows.find((row) => row[0] === 'long-poll')?.[1]).toBe('cores: its --mode long-poll run delivered no measured update, 4.32 Gbit/s');
  });

  it('leaves a cell empty when the plan has no row for it', () => {
    const sparse: CapacityPlan = {
      inputs: plan.inputs,
      assumptions: [],
      rows: [
        { transport: 'poll', malSeconds: 5, clients: 1_000_000, intervalSeconds: 5, cores: 1, coresNote: null, gbitPerSecond: 2 },
        { transport: 'poll', malSeconds: 1, clients: 100_000, intervalSeconds: 1, cores: 3, coresNote: null, gbitPerSecond: 4 },
      ],
    };
    expect(capacityCells(sparse).rows).toEqual([
      ['poll (MAL 5 s)', '', '', '', '1 cores, 2 Gbit/s'],
      ['poll (MAL 1 s)', '3 cores, 4 Gbit/s', '', '', ''],
    ]);
  });
});

describe('capacityTable', () => {
  const lines = capacityTable(plan).split('\n');
  const tableLines = lines.slice(1, 3 + capacityCells(plan).rows.length);

  it('titles the table, then a header, a rule and a line per row, then each assumption as a list item', () => {
    expect(lines[0]).toMatch(/^Capacity plan \(from this run's measurements/);
    expect(lines[1]).toMatch(/^transport\s+100,000 @ 1 s/);
    expect(lines[2]).toMatch(/^-+( +-+){4}$/);
    expect(lines.slice(3, 3 + 10).map((line) => line.split(/ {2,}/)[0])).toEqual(capacityCells(plan).rows.map((row) => row[0]));
    expect(lines.slice(3 + 10)).toEqual(plan.assumptions.map((assumption) => `- ${assumption}`));
  });

  it('aligns the columns: each cell padded to its column\'s widest, columns two spaces apart', () => {
    expect(new Set(tableLines.map((line) => line.length)).size).toBe(1);
    const rule = lines[2]!;
    const { header, rows } = capacityCells(plan);
    const widths = rule.split('  ').map((dashes) => dashes.length);
    expect(widths).toEqual(header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length))));
    // Every column starts where the rule's dashes start.
    const starts = [...rule.matchAll(/-+/g)].map((match) => match.index);
    for (const line of tableLines.slice(2)) {
      for (const start of starts.slice(1)) expect(line.slice(start - 2, start), line).toBe('  ');
    }
  });
});
