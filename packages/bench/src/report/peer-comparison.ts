import type { RunSummary } from '../scenario/run-benchmark.js';

type Run = Pick<RunSummary, 'mode' | 'clients' | 'latencyMs' | 'missedUpdates' | 'serverCpuMicrosPerUpdate' | 'serverRssMiB' | 'proxy' | 'sseEncoding' | 'log' | 'serverInstances'> &
  Partial<Pick<RunSummary, 'peer'>>;

/** One side of the comparison: what the fleet measured, and the server's CPU and memory. */
export interface PeerSide {
  readonly p50: number;
  readonly p99: number;
  readonly missedUpdates: number;
  /** Server CPU per delivered update (µs): the publisher's processes, or the peer's worker. */
  readonly cpuMicrosPerUpdate: number | null;
  /** Resident memory over the run, mean and peak (MiB). */
  readonly rssMiB: { readonly mean: number; readonly max: number } | null;
}

/** The publisher's SSE run beside the peer's run of the same fleet (`--peer`), at one client count. */
export interface PeerComparisonRow {
  readonly peer: 'nchan';
  readonly clients: number;
  readonly publisher: PeerSide;
  readonly nchan: PeerSide;
  /** publisher ÷ nchan; null when a side lacks the figure. */
  readonly ratio: { readonly p50: number | null; readonly p99: number | null; readonly cpuMicrosPerUpdate: number | null; readonly rssMiB: number | null };
}

const ratio = (publisher: number | null | undefined, peer: number | null | undefined) =>
  publisher === null || publisher === undefined || peer === null || peer === undefined || peer === 0 ? null : Math.round((publisher / peer) * 100) / 100;

const side = (run: Run): PeerSide => ({
  p50: run.latencyMs.p50,
  p99: run.latencyMs.p99,
  missedUpdates: run.missedUpdates,
  cpuMicrosPerUpdate: run.serverCpuMicrosPerUpdate,
  rssMiB: run.serverRssMiB,
});

/**
 * Pairs each peer run with the publisher's identity SSE run (one instance, no proxy) of the same
 * client count: latency, CPU per delivered update and memory side by side, and publisher ÷ peer (pure).
 */
export function peerComparison(runs: readonly Run[]): PeerComparisonRow[] {
  return runs
    .filter((run) => run.peer === 'nchan')
    .flatMap((peer) => {
      const publisher = runs.find(
        (run) => run.peer === undefined && run.mode === 'sse' && run.sseEncoding !== 'gzip' && run.proxy === 'none' && run.log === peer.log && run.serverInstances === 1 && run.clients === peer.clients,
      );
      if (publisher === undefined) return [];
      const [ours, theirs] = [side(publisher), side(peer)];
      return [
        {
          peer: 'nchan' as const,
          clients: peer.clients,
          publisher: ours,
          nchan: theirs,
          ratio: {
            p50: ratio(ours.p50, theirs.p50),
            p99: ratio(ours.p99, theirs.p99),
            cpuMicrosPerUpdate: ratio(ours.cpuMicrosPerUpdate, theirs.cpuMicrosPerUpdate),
            rssMiB: ratio(ours.rssMiB?.mean, theirs.rssMiB?.mean),
          },
        },
      ];
    });
}

export function peerComparisonCells(rows: readonly PeerComparisonRow[]): { header: string[]; rows: string[][] } {
  const shown = (value: number | null | undefined) => (value === null || value === undefined ? '–' : String(value));
  const missed = (value: PeerSide) => (value.missedUpdates > 0 ? ` (${value.missedUpdates} missed)` : '');
  const cells = (value: PeerSide) => [`${value.p50} / ${value.p99}${missed(value)}`, shown(value.cpuMicrosPerUpdate), value.rssMiB === null ? '–' : `${value.rssMiB.mean} (max ${value.rssMiB.max})`];
  return {
    header: [
      'clients',
      'publisher p50 / p99 ms',
      'publisher µs CPU/update',
      'publisher MiB',
      'nchan p50 / p99 ms',
      'nchan µs CPU/update',
      'nchan worker MiB',
      'CPU/update ×',
      'p50 ×',
      'p99 ×',
      'RSS ×',
    ],
    rows: rows.map((row) => [
      String(row.clients),
      ...cells(row.publisher),
      ...cells(row.nchan),
      shown(row.ratio.cpuMicrosPerUpdate),
      shown(row.ratio.p50),
      shown(row.ratio.p99),
      shown(row.ratio.rssMiB),
    ]),
  };
}

export const PEER_COMPARISON_NOTE =
  'The same fleet against the publisher and against nginx + nchan (1 worker) fed the publisher\'s elements; × is publisher ÷ nchan. ' +
  'nchan\'s CPU and memory are its worker process\'s; its latency runs from the moment the element is handed to it, the publisher\'s from the element\'s generation.';

/** The comparison as text, printed at the end of `--peer nchan`. */
export function peerComparisonTable(rows: readonly PeerComparisonRow[]): string {
  const { header, rows: cells } = peerComparisonCells(rows);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  return ['The publisher beside nchan (SSE, the same fleet):', line(header), line(widths.map((width) => '-'.repeat(width))), ...cells.map(line), PEER_COMPARISON_NOTE].join('\n');
}
