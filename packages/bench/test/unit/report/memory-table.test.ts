import { describe, expect, it } from 'vitest';
import type { ConnectionMemoryRow } from '../../../src/analyze/memory-per-connection.js';
import { memoryCells, memoryTable } from '../../../src/report/memory-table.js';

const figures = (serverRssKiB: number) => ({ serverRssKiB, tcpKernelKiBBothEnds: 0.4, tcpKernelKiBPerSide: 0.2, tcpSocketsPerConnection: 2 });
const rows: ConnectionMemoryRow[] = [
  { connection: 'SSE subscriber', clients: [2_000, 10_000], idle: figures(16.4), active: figures(19.1), idleSlope: figures(14.2) },
  { connection: 'long-poll waiter', clients: [2_000], idle: null, active: figures(30), idleSlope: null },
];

describe('memoryCells', () => {
  it('has, per kind of connection, an idle row, an active row, and a slope row when runs of several sizes allow one', () => {
    const { header, rows: body } = memoryCells(rows);
    expect(header).toEqual(['connection', 'clients', 'state', 'publisher RSS KiB', 'TCP buffers KiB (both ends)', 'TCP buffers KiB (per side, est.)', 'TCP sockets']);
    expect(body.map((row) => row.slice(0, 4))).toEqual([
      ['SSE subscriber', '2000, 10000', 'idle', '16.4'],
      ['SSE subscriber', '2000, 10000', 'active (peak)', '19.1'],
      ['SSE subscriber', '2000, 10000', 'idle, slope across runs', '14.2'],
      ['long-poll waiter', '2000', 'idle', 'no reading: no element came after every client had connected'],
      ['long-poll waiter', '2000', 'active (peak)', '30'],
    ]);
    expect(body[0]!.slice(4)).toEqual(['0.4', '0.2', '2']);
  });

  it('says a TCP figure could not be read rather than leaving it blank', () => {
    const offLinux = memoryCells([{ connection: 'WebSocket', clients: [100], idle: { serverRssKiB: 9, tcpKernelKiBBothEnds: null, tcpKernelKiBPerSide: null, tcpSocketsPerConnection: null }, active: null, idleSlope: null }]);
    expect(offLinux.rows[0]!.slice(4)).toEqual(Array(3).fill('not read (no /proc/net/sockstat)'));
  });
});

describe('memoryTable', () => {
  it('prints a title, the header, a rule, the rows and what the columns mean', () => {
    const lines = memoryTable(rows).split('\n');
    expect(lines[0]).toBe('Memory per connection:');
    expect(lines[1]).toMatch(/^connection\s+clients\s+state\s+publisher RSS KiB/);
    expect(lines[2]).toMatch(/^-+( +-+){6}$/);
    expect(lines.slice(3, 8).map((line) => line.split(/ {2,}/)[0])).toEqual(['SSE subscriber', 'SSE subscriber', 'SSE subscriber', 'long-poll waiter', 'long-poll waiter']);
    expect(lines.slice(8).every((line) => line.startsWith('- '))).toBe(true);
    expect(lines.slice(8).join(' ')).toMatch(/both ends/);
  });

  it('says why there is no table when no run read the publisher\'s memory', () => {
    expect(memoryTable([])).toMatch(/not measured \(--target/);
  });
});
