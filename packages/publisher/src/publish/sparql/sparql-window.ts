import { parseDayTimeDuration } from '@rdf-stream/protocol';
import { echoed, PublisherError } from '../../errors.js';
import type { EventLog } from '../../log/event-log.js';
import type { LoggedElement } from '../../model/stream-element.js';

/** The elements a query ranges over: the latest, the last `count`, or those of the last `durationMs`. */
export type SparqlWindow =
  | { readonly kind: 'latest' }
  | { readonly kind: 'elements'; readonly count: number }
  | { readonly kind: 'duration'; readonly durationMs: number; readonly text: string };

/** The query parameters that choose the window (docs/protocol.md). */
export const windowParameters = Object.freeze({ elements: 'elements', duration: 'duration' });

/** Elements read from the log at a time while looking back over a duration (count). */
const DURATION_READ_BATCH = 64;

/**
 * The window a request names with `elements` (a whole number ≥ 1) or `duration` (an
 * `xsd:dayTimeDuration`, e.g. `PT5M`), at most one of them; neither: the latest element.
 * Refuses a window of more than `maxElements` elements by count here, by duration when resolved.
 */
export function parseSparqlWindow(elements: string | undefined, duration: string | undefined, maxElements: number): SparqlWindow {
  if (elements !== undefined && duration !== undefined) {
    throw new PublisherError('PUB_ERR_SPARQL_BAD_REQUEST', 'Give either elements= or duration=, not both');
  }
  if (elements !== undefined) {
    if (!/^[1-9]\d{0,8}$/.test(elements)) {
      throw new PublisherError('PUB_ERR_SPARQL_BAD_REQUEST', `elements= takes a whole number of elements, at least 1 (got "${echoed(elements)}")`);
    }
    const count = Number(elements);
    if (count > maxElements) throw windowTooLarge(`elements=${count}`, maxElements);
    return { kind: 'elements', count };
  }
  if (duration !== undefined) {
    const durationMs = parseDayTimeDuration(duration);
    if (durationMs === undefined || durationMs <= 0) {
      throw new PublisherError('PUB_ERR_SPARQL_BAD_REQUEST', `duration= takes a positive xsd:dayTimeDuration such as PT5M (got "${echoed(duration)}")`);
    }
    return { kind: 'duration', durationMs, text: duration };
  }
  return { kind: 'latest' };
}

/**
 * The window's retained elements, oldest first: consecutive elements of the log, so that their
 * first and last sequence numbers name them. A duration counts back from `nowMs`; one that
 * holds more than `maxElements` elements is refused, after reading at most that many and a batch.
 */
export async function readSparqlWindow(log: EventLog, window: SparqlWindow, maxElements: number, nowMs: number): Promise<LoggedElement[]> {
  const oldest = log.oldestSeq;
  if (oldest === undefined) return [];
  const latestSeq = log.latestSeq;
  if (window.kind === 'latest') {
    const latest = log.latest();
    return latest === undefined ? [] : [latest];
  }
  if (window.kind === 'elements') {
    const from = Math.max(oldest, latestSeq - window.count + 1);
    return log.read(from, latestSeq - from + 1);
  }
  const sinceMs = nowMs - window.durationMs;
  const newestFirst: LoggedElement[] = [];
  for (let end = latestSeq; end >= oldest; end -= DURATION_READ_BATCH) {
    const from = Math.max(oldest, end - DURATION_READ_BATCH + 1);
    const batch = await log.read(from, end - from + 1);
    for (let index = batch.length - 1; index >= 0; index--) {
      const element = batch[index];
      if (element === undefined) continue;
      if (element.generatedAt.getTime() < sinceMs) return newestFirst.reverse();
      newestFirst.push(element);
      if (newestFirst.length > maxElements) throw windowTooLarge(`duration=${echoed(window.text)}`, maxElements);
    }
  }
  return newestFirst.reverse();
}

function windowTooLarge(what: string, maxElements: number): PublisherError {
  return new PublisherError(
    'PUB_ERR_SPARQL_WINDOW_TOO_LARGE',
    `${what} holds more than ${maxElements} elements, the most one query may range over (sparqlMaxElements)`,
    { maxElements },
  );
}
