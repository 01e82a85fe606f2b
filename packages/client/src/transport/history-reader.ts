import { formatOfContentType, HISTORY_INDEX_SEGMENT, mediaTypes } from '@rdf-stream/protocol';
import { type BackoffOptions, backoffDelay, delay } from './backoff.js';
import { networkFailure } from './network-error.js';
import { type HistoryDocumentFormat, type HistoryMember, type HistoryPage, type HistoryRelation, parseHistoryPage } from './history-page.js';
import { httpFailure, RetryableHttpError, SubscriptionError } from './subscription-error.js';
import type { GapEvent, ReconnectEvent, TransportEvent } from './transport-event.js';
import type { TransportStats } from './transport-stats.js';

/**
 * Where a replay starts, inclusive: a sequence number of the log's current epoch, or a time
 * (elements whose `prov:generatedAtTime`, on the server's clock, is at or after it).
 */
export type HistoryStart = number | Date;

export interface HistoryReaderOptions {
  readonly from: HistoryStart;
  readonly backoff: BackoffOptions;
  readonly stats: TransportStats;
  readonly signal?: AbortSignal;
  readonly fetch?: typeof fetch;
}

/**
 * Where the history ended: the newest element it showed, replayed or not (an element older than
 * the start is shown too). Live delivery resumes right after it: SSE with `lastId` as its
 * `Last-Event-ID`, polling by skipping sequence numbers up to `lastSeq`. All undefined when
 * the log held nothing.
 */
export interface HistoryPosition {
  readonly epoch: string | undefined;
  readonly lastSeq: number | undefined;
  /** `{epoch}-{seq}`. */
  readonly lastId: string | undefined;
}

/**
 * A 410 says retention removed a page between the link to it and the request: the walk starts
 * again from the root (or the index) this many times in a row (with no element read in between) before giving up.
 */
const maxRestartsWithoutProgress = 1;

/**
 * Replays a stream's history (`{stream}/history`, an LDES/TREE view): when `from` is a time,
 * reads the time index (`{stream}/history/index`, `streamResources(…).historyIndex`) and goes to
 * the page holding it (the last page the index's relations say started before it); else reads
 * the root, whose one relation leads to the oldest page. Then follows each page's
 * `GreaterThanOrEqualToRelation` to the next page, and yields every member from `from` on,
 * once, in sequence order, as an N-Quads element (`format: 'nquads'`, `id: {epoch}-{seq}`), like
 * a live transport. Returns the position live delivery resumes after.
 *
 * Gaps are said before the element that follows them: `expired` when the elements wanted are
 * older than the log retains (a sequence number below the oldest retained one; a time before the
 * oldest retained element when older ones were removed), `epoch` when the log started a new
 * life during the walk, `sequence-jump` when a page skips numbers. Fetches honour `signal`
 * (the replay then ends early); network errors and 5xx are retried with `backoff`, reported as
 * `reconnect` events; a refusal (4xx of the root, a page that stays gone) throws
 * `SubscriptionError`.
 */
export async function* historyReader(historyUrl: string, options: HistoryReaderOptions): AsyncGenerator<TransportEvent, HistoryPosition, undefined> {
  const { from, stats } = options;
  const fromMs = from instanceof Date ? from.getTime() : undefined;
  const fromSeq = typeof from === 'number' ? Math.max(1, from) : undefined;
  /** The newest element seen, and the epoch `fromSeq` belongs to (the first one seen). */
  let newest: HistoryMember | undefined;
  let startEpoch: string | undefined;
  const wanted = (member: HistoryMember) =>
    fromSeq === undefined
      ? (member.generatedAt?.getTime() ?? Number.NEGATIVE_INFINITY) >= (fromMs ?? Number.NEGATIVE_INFINITY)
      : member.epoch !== startEpoch || member.seq >= fromSeq;
  let restarts = 0;

  const indexUrl = `${historyUrl}/${HISTORY_INDEX_SEGMENT}`;
  /** A publisher from before the index answers 404 there: its root relates to every page. */
  let hasIndex = true;

  walks: for (;;) {
    // By time (after a restart: from the newest element read), from the index; else from the root.
    const startMs = newest?.generatedAt?.getTime() ?? fromMs;
    let startUrl = startMs !== undefined && hasIndex ? indexUrl : historyUrl;
    let url: string | undefined = startUrl;
    const visited = new Set<string>();
    let firstOfWalk = true;
    // A cycle of relations would loop for ever: each node is read once per walk.
    while (url !== undefined && !visited.has(url)) {
      visited.add(url);
      const role: DocumentRole = url === startUrl ? (url === indexUrl ? 'index' : 'root') : 'page';
      const fetched: Fetched = yield* fetchDocument(url, role, options);
      if (fetched.kind === 'aborted') break walks;
      if (fetched.kind === 'end' && role === 'index') {
        hasIndex = false;
        startUrl = url = historyUrl;
        continue;
      }
      if (fetched.kind === 'end') break;
      if (fetched.kind === 'gone') {
        if (restarts++ >= maxRestartsWithoutProgress) {
          throw new SubscriptionError(`${url} answered 410 again: retention removes history pages faster than they are read`, 410);
        }
        continue walks;
      }
      if (url === startUrl) {
        // The root or the index: the page to start at. Pages before it hold nothing wanted.
        const start = startNode(fetched.page.relations, startMs);
        if (start !== fetched.page.next) firstOfWalk = false;
        url = start;
      } else {
        // A page retention removed, still answering: it leads to the oldest retained page.
        if (fetched.page.members.length === 0 && fetched.page.next !== undefined) firstOfWalk = true;
        url = fetched.page.next;
      }
      for (const member of fetched.page.members) {
        const oldestRetained = firstOfWalk;
        firstOfWalk = false;
        // Read already, before a restart from the root or the index.
        if (newest !== undefined && member.epoch === newest.epoch && member.seq <= newest.seq) continue;
        if (newest === undefined) startEpoch = member.epoch;
        const gap = gapBefore(member, newest, { fromSeq, fromMs, oldestRetained });
        newest = member;
        if (!wanted(member)) continue;
        if (gap !== undefined) yield gap;
        restarts = 0;
        stats.elements++;
        yield { type: 'element', text: member.text, format: 'nquads', receivedAt: fetched.receivedAt, ...(member.id === undefined ? {} : { id: member.id }) };
      }
    }
    break;
  }
  return { epoch: newest?.epoch, lastSeq: newest?.seq, lastId: newest?.id };
}

/**
 * Where a walk from the index (or the root) goes first: for a time, the last node whose relation
 * says it started before `fromMs` (a node that started at `fromMs` exactly may follow one ending
 * then), else the oldest; without a time, the oldest.
 */
export function startNode(relations: readonly HistoryRelation[], fromMs: number | undefined): string | undefined {
  const oldest = relations[0]?.node;
  if (fromMs === undefined) return oldest;
  let start = oldest;
  for (const relation of relations) {
    if (!(relation.fromMs < fromMs)) break;
    start = relation.node;
  }
  return start;
}

/**
 * The gap, if any, between what was read or asked for and `member`, the next element of the
 * walk; `oldestRetained` when it is the first element of a walk from the root or the index.
 */
function gapBefore(
  member: HistoryMember,
  previous: HistoryMember | undefined,
  start: { readonly fromSeq: number | undefined; readonly fromMs: number | undefined; readonly oldestRetained: boolean },
): GapEvent | undefined {
  if (previous !== undefined && member.epoch !== previous.epoch) {
    return { type: 'gap', afterSeq: previous.seq, resumedAtSeq: member.seq, reason: 'epoch' };
  }
  const expectedSeq = Math.max(start.fromSeq ?? 1, previous === undefined ? 1 : previous.seq + 1);
  if (previous === undefined && start.fromMs !== undefined) {
    // A time: what came before the oldest retained element is unknown, so anything removed
    // (it was not the first of its log) may have been generated after the start.
    const removedAfterStart = start.oldestRetained && member.seq > 1 && (member.generatedAt?.getTime() ?? Number.NEGATIVE_INFINITY) > start.fromMs;
    return removedAfterStart ? { type: 'gap', afterSeq: undefined, resumedAtSeq: member.seq, reason: 'expired' } : undefined;
  }
  if (member.seq <= expectedSeq) return undefined;
  return { type: 'gap', afterSeq: expectedSeq - 1, resumedAtSeq: member.seq, reason: start.oldestRetained ? 'expired' : 'sequence-jump' };
}

type Fetched =
  | { readonly kind: 'page'; readonly page: HistoryPage; readonly receivedAt: number }
  /** A page retention removed (410). */
  | { readonly kind: 'gone' }
  /** A page beyond the newest one (404): nothing more yet; no time index (404). */
  | { readonly kind: 'end' }
  | { readonly kind: 'aborted' };

/** What a document is to the walk: the root, the time index (404 from a publisher without one), or a page. */
type DocumentRole = 'root' | 'index' | 'page';

/** Reads one history document, retrying network errors, 5xx and unparsable bodies with backoff. */
async function* fetchDocument(url: string, role: DocumentRole, options: HistoryReaderOptions): AsyncGenerator<ReconnectEvent, Fetched, undefined> {
  const { stats, signal, fetch: fetchImpl = fetch } = options;
  let attempt = 0;
  while (!signal?.aborted) {
    let reason: string;
    let networkError: { readonly networkError?: string };
    let waitMs: number | undefined;
    try {
      stats.requests++;
      const response = await fetchImpl(url, { headers: { accept: role === 'page' ? mediaTypes.nquads : nodeAccept }, signal: signal ?? null });
      if ((role === 'page' && response.status === 410) || (role !== 'root' && response.status === 404)) {
        await response.body?.cancel();
        return { kind: response.status === 410 ? 'gone' : 'end' };
      }
      if (!response.ok) throw await httpFailure(response, url);
      const format = documentFormat(response.headers.get('content-type'));
      if (format === undefined) {
        await response.body?.cancel();
        throw new SubscriptionError(`${url} answered ${response.headers.get('content-type')}: elements are told apart by their graphs, in N-Quads or TriG`, 406);
      }
      const text = await response.text();
      const receivedAt = Date.now();
      return { kind: 'page', page: parseHistoryPage(text, { baseIri: url, format }), receivedAt };
    } catch (error) {
      if (signal?.aborted) break;
      if (error instanceof SubscriptionError) throw error;
      waitMs = error instanceof RetryableHttpError ? error.retryAfterMs : undefined;
      const { description, ...code } = networkFailure(error);
      reason = error instanceof RetryableHttpError ? error.message : `${url}: ${description}`;
      networkError = code;
    }
    const delayMs = waitMs ?? backoffDelay(attempt++, options.backoff);
    stats.reconnects++;
    yield { type: 'reconnect', reason, delayMs, ...networkError };
    if (!(await delay(delayMs, signal))) break;
  }
  return { kind: 'aborted' };
}

/** The index lists every page: TriG writes it in about half the bytes of N-Quads. */
const nodeAccept = `${mediaTypes.trig}, ${mediaTypes.nquads};q=0.9`;

/** N-Quads when the server does not say (it was asked for); TriG also keeps graphs apart. */
function documentFormat(contentType: string | null): HistoryDocumentFormat | undefined {
  if (contentType === null) return 'nquads';
  const format = formatOfContentType(contentType);
  return format === 'nquads' || format === 'trig' ? format : undefined;
}
