import type { ConnectionMemory, ConnectionMemoryRow } from '../analyze/memory-per-connection.js';

/** What each column of the memory table holds (the report prints it under the table). */
export const MEMORY_TABLE_NOTES = [
  'Per connection: (reading with N clients − reading with the publisher started and no client) ÷ N, N = clients connected at the reading; idle: every client connected, half an interval after an element; active: the peak of each figure over the measurement (read every 500 ms), updates in flight; slope: of the idle readings against clients, across the runs of several sizes (baseline and heap slack cancel out).',
  'Publisher RSS: resident memory of the publisher’s processes (and the proxy’s), /proc/<pid>/statm; it includes garbage not yet collected, so the slope is the better figure when there is one.',
  'TCP buffers: /proc/net/sockstat “TCP … mem” (pages × page size), socket send and receive queues of the whole machine: the fleet’s end of each loopback connection counts as well as the publisher’s, so “per side” is half of it, an estimate; the socket structures themselves (about 2 KiB each, in the kernel’s slab) are not in it; the kernel counts it in per-CPU batches (net.core.mem_pcpu_rsv, 256 pages = 1 MiB by default), so a reading moves by up to that much per CPU with nothing changed, and idle connections, which hold next to nothing, read about 0. Sockets per connection should read 2 (both ends): more or less means other work on the machine opened or closed sockets meanwhile.',
] as const;

const value = (figure: number | null) => (figure === null ? 'not read (no /proc/net/sockstat)' : String(figure));

function cells(row: ConnectionMemoryRow, state: string, figures: ConnectionMemory | null): string[] {
  const clients = row.clients.join(', ');
  if (figures === null) return [row.connection, clients, state, 'no reading: no element came after every client had connected', '', '', ''];
  return [row.connection, clients, state, String(figures.serverRssKiB), value(figures.tcpKernelKiBBothEnds), value(figures.tcpKernelKiBPerSide), value(figures.tcpSocketsPerConnection)];
}

/** The memory table: per kind of connection, idle and active, and the slope when runs of several sizes allow it. */
export function memoryCells(rows: readonly ConnectionMemoryRow[]): { header: string[]; rows: string[][] } {
  return {
    header: ['connection', 'clients', 'state', 'publisher RSS KiB', 'TCP buffers KiB (both ends)', 'TCP buffers KiB (per side, est.)', 'TCP sockets'],
    rows: rows.flatMap((row) => [
      cells(row, 'idle', row.idle),
      cells(row, 'active (peak)', row.active),
      ...(row.idleSlope === null ? [] : [cells(row, 'idle, slope across runs', row.idleSlope)]),
    ]),
  };
}

/** The memory table as text, with what its columns mean. */
export function memoryTable(rows: readonly ConnectionMemoryRow[]): string {
  const { header, rows: body } = memoryCells(rows);
  if (body.length === 0) return 'Memory per connection: not measured (--target: the publisher is not this benchmark\'s process).';
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd();
  return ['Memory per connection:', line(header), line(widths.map((width) => '-'.repeat(width))), ...body.map(line), ...MEMORY_TABLE_NOTES.map((note) => `- ${note}`)].join('\n');
}
