import type { RunSummary } from '../scenario/run-benchmark.js';
import { runLabel } from './run-label.js';

/** What a gzip SSE run's clients did: the sample that inflated everything, and whether the cheap reading matched it. */
export function gzipNote(run: RunSummary): string {
  const reading = run.gzipReading!;
  const bytesPerPiece = reading.pieces === 0 ? 0 : Math.round(reading.compressedBytes / reading.pieces);
  return (
    `${runLabel(run)}, ${run.clients} clients: ${reading.verifyClients} sample clients inflated their whole stream; ` +
    `${reading.verified} events of theirs matched the cheap reading, ${reading.mismatches} did not${reading.mismatches > 0 ? ' (!: the figures of this run are not to be trusted)' : ''}; ` +
    `the clients found ${reading.pieces} messages (events, heartbeats, preambles) in the compressed bytes, ${bytesPerPiece} bytes each on average, ` +
    `and their workers inflated ${reading.piecesInflated} distinct ones, once each.`
  );
}
