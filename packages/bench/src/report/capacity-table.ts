import { type CapacityPlan, type CapacityRow, PLAN_CLIENTS, PLAN_INTERVAL_SECONDS } from '../analyze/capacity-plan.js';

/**
 * One cell: cores and bandwidth. A figure the invocation did not measure says so and which run
 * measures it (never a bare dash); cores from another run's cost say whose.
 */
export function capacityCell(row: CapacityRow): string {
  const cores = row.cores === null ? `cores: ${row.coresNote ?? 'not measured'}` : `${row.cores} cores${row.coresNote === null ? '' : ` (${row.coresNote})`}`;
  const network = row.gbitPerSecond === null ? 'Gbit/s: the element’s bytes were not read after the run' : `${row.gbitPerSecond} Gbit/s`;
  return `${cores}, ${network}`;
}

/** The capacity plan's cells: one row per transport (and MAL), one column per clients × interval. */
export function capacityCells(plan: CapacityPlan): { header: string[]; rows: string[][] } {
  const columns = PLAN_CLIENTS.flatMap((clients) => PLAN_INTERVAL_SECONDS.map((intervalSeconds) => ({ clients, intervalSeconds })));
  const header = ['transport', ...columns.map(({ clients, intervalSeconds }) => `${clients.toLocaleString('en')} @ ${intervalSeconds} s`)];
  const names = [...new Set(plan.rows.map((row) => `${row.transport}${row.malSeconds === null ? '' : ` (MAL ${row.malSeconds} s)`}`))];
  const rows = names.map((name) => [
    name,
    ...columns.map(({ clients, intervalSeconds }) => {
      const row = plan.rows.find((candidate) => `${candidate.transport}${candidate.malSeconds === null ? '' : ` (MAL ${candidate.malSeconds} s)`}` === name && candidate.clients === clients && candidate.intervalSeconds === intervalSeconds);
      return row === undefined ? '' : capacityCell(row);
    }),
  ]);
  return { header, rows };
}

/** The capacity plan as a text table, with its assumptions. */
export function capacityTable(plan: CapacityPlan): string {
  const { header, rows } = capacityCells(plan);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  return [
    'Capacity plan (from this run\'s measurements; cores of this machine, identity bytes):',
    line(header),
    line(widths.map((width) => '-'.repeat(width))),
    ...rows.map(line),
    ...plan.assumptions.map((assumption) => `- ${assumption}`),
  ].join('\n');
}
