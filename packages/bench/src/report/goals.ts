import type { RunSummary } from '../scenario/run-benchmark.js';
import { runLabel } from './run-label.js';

type Run = Pick<
  RunSummary,
  | 'mode'
  | 'clients'
  | 'latencyMs'
  | 'serverCpuMicrosPerUpdate'
  | 'requests'
  | 'connected'
  | 'updatesPublished'
  | 'proxy'
  | 'pollStrategy'
  | 'sseEncoding'
  | 'websocketClient'
  | 'log'
  | 'serverInstances'
> &
  Partial<Pick<RunSummary, 'peer'>>;

/** A figure a run is held to: its own, or its ratio to another run's at the same client count. */
export interface GoalRow {
  readonly goal: string;
  /** The run held to it (`poll (smart)`). */
  readonly run: string;
  readonly clients: number;
  /** The run's figure (ms, µs, requests per update per client). */
  readonly figure: number | null;
  /** The reference run (`sse (identity)`), or null for a goal on the figure itself. */
  readonly reference: string | null;
  readonly referenceFigure: number | null;
  /** figure ÷ referenceFigure, or the figure itself for a goal without reference. */
  readonly value: number | null;
  /** The goal: value ≤ bound. */
  readonly bound: number;
  /** Null when the run or its reference lacks the figure: `missing` says which run to add. */
  readonly met: boolean | null;
  readonly missing?: string;
}

type Figure = 'p99' | 'cpu' | 'requests';

interface Goal {
  readonly goal: string;
  /** The runs held to it. */
  readonly applies: (run: Run) => boolean;
  readonly figure: Figure;
  /** The reference at the same client count (and log), or none. */
  readonly reference?: { readonly name: string; readonly is: (run: Run) => boolean; readonly flag: string };
  readonly bound: number;
  /** Held only when the invocation ran the reference: a peer's run is asked for (`--peer`), never implied. */
  readonly onlyWithReference?: boolean;
}

/** The publisher's own run, with no proxy in front (not a peer's). */
const direct = (run: Run) => run.proxy === 'none' && run.peer === undefined;
const sseIdentity = { name: 'sse (identity)', is: (run: Run) => run.mode === 'sse' && run.sseEncoding !== 'gzip' && direct(run), flag: '--mode sse' };
const nchanSse = { name: 'sse (identity) on nchan', is: (run: Run) => run.mode === 'sse' && run.peer === 'nchan', flag: '--mode sse --peer nchan' };
const fixedPoll = { name: 'poll (fixed)', is: (run: Run) => run.mode === 'poll' && run.pollStrategy === 'fixed' && direct(run), flag: '--mode poll --poll-strategy fixed' };
const smartPoll = (run: Run) => run.mode === 'poll' && run.pollStrategy === 'smart' && direct(run);

/** The performance goals the project holds itself to (docs/bench.md, "Goals"): each run of their modes is checked against them. */
export const GOALS: readonly Goal[] = [
  { goal: 'smart polling: p99 ≤ fixed polling’s', applies: smartPoll, figure: 'p99', reference: fixedPoll, bound: 1 },
  { goal: 'smart polling: p99 ≤ 1.5 × SSE’s', applies: smartPoll, figure: 'p99', reference: sseIdentity, bound: 1.5 },
  { goal: 'smart polling: ≤ 1.2 requests per update per client', applies: smartPoll, figure: 'requests', bound: 1.2 },
  { goal: 'smart polling: server CPU per update ≤ ½ fixed polling’s', applies: smartPoll, figure: 'cpu', reference: fixedPoll, bound: 0.5 },
  { goal: 'long-poll: p99 ≤ 1.5 × SSE’s', applies: (run) => run.mode === 'long-poll' && direct(run), figure: 'p99', reference: sseIdentity, bound: 1.5 },
  { goal: 'long-poll: server CPU per update ≤ 2 × SSE’s', applies: (run) => run.mode === 'long-poll' && direct(run), figure: 'cpu', reference: sseIdentity, bound: 2 },
  { goal: 'gzip SSE: p99 ≤ 1.2 × identity SSE’s', applies: (run) => run.mode === 'sse' && run.sseEncoding === 'gzip' && direct(run), figure: 'p99', reference: sseIdentity, bound: 1.2 },
  { goal: 'SSE CPU ≤ 0.7 × nchan’s', applies: sseIdentity.is, figure: 'cpu', reference: nchanSse, bound: 0.7, onlyWithReference: true },
];

function figureOf(run: Run, figure: Figure): number | null {
  if (figure === 'p99') return Number.isFinite(run.latencyMs.p99) ? run.latencyMs.p99 : null;
  if (figure === 'cpu') return run.serverCpuMicrosPerUpdate;
  // Every element published during the measurement is asked for by every client within it (its
  // requests are sent when it is due); the run's `updatesExpected` leaves out the last ones,
  // generated too close to the end for every client to have fetched them, whose requests count.
  const asked = run.connected * run.updatesPublished;
  return asked > 0 ? run.requests / asked : null;
}

const round = (value: number) => Math.round(value * 100) / 100;

/**
 * Every goal a run of this invocation is held to, with the run it is measured against (same
 * client count, same log and instances, no proxy), as a ratio beside its bound (pure).
 */
export function goalRows(runs: readonly Run[]): GoalRow[] {
  return GOALS.filter((goal) => !goal.onlyWithReference || runs.some((run) => goal.reference?.is(run))).flatMap((goal) =>
    runs.filter(goal.applies).map((run): GoalRow => {
      const measured = figureOf(run, goal.figure);
      const figure = measured === null ? null : round(measured);
      const base = { goal: goal.goal, run: runLabel(run), clients: run.clients, figure, bound: goal.bound };
      if (goal.reference === undefined) {
        return { ...base, reference: null, referenceFigure: null, value: figure === null ? null : round(figure), met: figure === null ? null : figure <= goal.bound };
      }
      const { name, is, flag } = goal.reference;
      const reference = runs.find((other) => is(other) && other.clients === run.clients && other.log === run.log && other.serverInstances === run.serverInstances);
      const referenceFigure = reference === undefined ? null : figureOf(reference, goal.figure);
      if (reference === undefined || referenceFigure === null || figure === null || referenceFigure === 0) {
        return {
          ...base,
          reference: name,
          referenceFigure,
          value: null,
          met: null,
          missing: reference === undefined ? `add ${flag} --clients ${run.clients} to the same invocation` : 'a figure was not measured',
        };
      }
      const value = round(figure / referenceFigure);
      return { ...base, reference: name, referenceFigure, value, met: value <= goal.bound };
    }),
  );
}

export function goalCells(rows: readonly GoalRow[]): { header: string[]; rows: string[][] } {
  const shown = (value: number | null) => (value === null ? '–' : String(value));
  return {
    header: ['goal', 'run', 'clients', 'figure', 'reference', 'value', 'bound', 'met'],
    rows: rows.map((row) => [
      row.goal,
      row.run,
      String(row.clients),
      shown(row.figure),
      row.reference === null ? '–' : `${row.reference}: ${shown(row.referenceFigure)}`,
      row.value === null ? '–' : row.reference === null ? String(row.value) : `× ${row.value}`,
      row.reference === null ? `≤ ${row.bound}` : `≤ × ${row.bound}`,
      row.met === null ? (row.missing ?? '–') : row.met ? 'yes' : 'NO',
    ]),
  };
}

/** The goals as text, printed at the end of a run when one of its modes has goals. */
export function goalTable(rows: readonly GoalRow[]): string {
  const { header, rows: cells } = goalCells(rows);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd();
  return ['Goals (p99 in ms, server CPU in µs per update; a ratio is to the reference run at the same client count):', line(header), line(widths.map((width) => '-'.repeat(width))), ...cells.map(line)].join('\n');
}
