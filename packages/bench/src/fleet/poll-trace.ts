import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The environment variable naming a directory: when set, each client worker writes there the
 * timing of every poll its clients sent (`poll-trace-{pid}.csv`), for
 * `scripts/poll-trace.ts` to tell where a smart poller's latency goes.
 */
export const POLL_TRACE_ENV = 'RDF_STREAM_BENCH_POLL_TRACE';

/** The columns of a trace, one row per request. */
export const pollTraceColumns = ['client', 'sentAtMs', 'answeredAtMs', 'status', 'changed', 'knownGeneratedAtMs', 'answerGeneratedAtMs'] as const;

/**
 * Per-request timing of a worker's pollers, kept in one flat array of numbers (a few hundred
 * thousand rows cost a few MiB, and nothing per request survives a scavenge but the numbers).
 */
export class PollTrace {
  readonly #rows: number[] = [];

  /** `knownGeneratedAtMs`: the newest element the client had when it asked (NaN: none); `answerGeneratedAtMs`: the element it got (NaN: none). */
  record(client: number, sentAtMs: number, answeredAtMs: number, status: number, changed: boolean, knownGeneratedAtMs: number, answerGeneratedAtMs: number): void {
    this.#rows.push(client, sentAtMs, answeredAtMs, status, changed ? 1 : 0, knownGeneratedAtMs, answerGeneratedAtMs);
  }

  /** Writes the trace as CSV into `directory` (made if missing), named after this process. */
  write(directory: string): void {
    mkdirSync(directory, { recursive: true });
    const width = pollTraceColumns.length;
    const lines = [pollTraceColumns.join(',')];
    for (let row = 0; row < this.#rows.length; row += width) lines.push(this.#rows.slice(row, row + width).join(','));
    writeFileSync(join(directory, `poll-trace-${process.pid}.csv`), `${lines.join('\n')}\n`);
  }
}
