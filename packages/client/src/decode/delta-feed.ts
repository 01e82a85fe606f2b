import type { DatasetCore, Quad } from '@rdfjs/types';
import { Parser, Store } from 'n3';
import { mediaTypes, opaqueTag, streamResources, streamResourceSegments, streamTerms } from '@rdf-stream/protocol';
import { type BackoffOptions, backoffDelay, delay } from '../transport/backoff.js';
import { sseTransport } from '../transport/sse-transport.js';
import { httpFailure, RetryableHttpError, SubscriptionError } from '../transport/subscription-error.js';
import type { GapEvent, ReconnectEvent } from '../transport/transport-event.js';
import type { TransportStats } from '../transport/transport-stats.js';
import { applyRdfPatch, parseRdfPatch, RdfPatchSyntaxError } from './rdf-patch.js';

/** The snapshot was (re)read: `store` now holds exactly `/latest` of element `id`. */
export interface SnapshotEvent {
  readonly type: 'snapshot';
  /** The element id (`{epoch}-{seq}`) `/latest` served; undefined while the stream is empty. */
  readonly id: string | undefined;
  /** The element's graph IRI (the subject of its `prov:generatedAtTime`). */
  readonly element: string | undefined;
  /** An n3 `Store`, typed as RDF/JS (the published declarations need no `@types/n3`). */
  readonly store: DatasetCore;
}

/** A patch applied: `store` now equals `/latest` of element `id`. */
export interface PatchEvent {
  readonly type: 'patch';
  /** The SSE id: the element id (`{epoch}-{seq}`). */
  readonly id: string | undefined;
  /** `H id` and `H prev`: the graph IRIs of this element and of the one it follows. */
  readonly element: string | undefined;
  readonly prev: string | undefined;
  readonly added: readonly Quad[];
  readonly deleted: readonly Quad[];
  /** The element's `prov:generatedAtTime` (server clock), when the patch adds it. */
  readonly generatedAt: Date | undefined;
  readonly receivedAt: Date;
  /** Size of the patch text (UTF-16 code units, ≈ bytes). */
  readonly bytes: number;
  readonly store: DatasetCore;
}

/**
 * The patch did not follow what the store holds (`prev` missing or another element, a gap the
 * server announced, or a patch that cannot be read): the snapshot is read again.
 */
export interface DeltaGapEvent {
  readonly type: 'gap';
  readonly reason: 'prev-mismatch' | 'malformed-patch' | GapEvent['reason'];
  /** The element the store held. */
  readonly held: string | undefined;
  /** The `prev` the patch named. */
  readonly prev: string | undefined;
}

export type DeltaEvent = SnapshotEvent | PatchEvent | DeltaGapEvent | ReconnectEvent;

export interface DeltaFeedOptions {
  readonly backoff: BackoffOptions;
  readonly maxEventBytes: number;
  readonly stats: TransportStats;
  readonly signal?: AbortSignal;
  readonly fetch?: typeof fetch;
}

/** `"{epoch}-{seq}-ntriples[-coding]"` → `{epoch}-{seq}`: the element `/latest` served. */
const etagElementId = (etag: string | null) => (etag === null ? undefined : /^"([a-z0-9]+-\d+)-/.exec(opaqueTag(etag))?.[1]);

/**
 * Keeps `store` equal to `/latest` of a stream: reads `/latest` in N-Triples (the snapshot),
 * then follows `/patches` from the element it served (`Last-Event-ID`), applying each patch
 * whose `H prev` names the element the store holds. Anything else — a patch that follows
 * another element, a server-announced gap, an unreadable patch — reads the snapshot again and
 * resumes from it. Yields what happened, with the store, after each step.
 */
export async function* deltaFeed(base: string, options: DeltaFeedOptions): AsyncGenerator<DeltaEvent> {
  const store = new Store();
  const { signal, fetch: fetchImpl = fetch } = options;
  const resources = streamResources(base);
  let failures = 0;
  while (!signal?.aborted) {
    let snapshot;
    try {
      options.stats.requests++;
      snapshot = await readSnapshot(resources.latest, store, fetchImpl, signal);
      failures = 0;
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof SubscriptionError) throw error;
      const delayMs = backoffDelay(failures++, options.backoff, error instanceof RetryableHttpError ? (error.retryAfterMs ?? 0) : 0);
      yield { type: 'reconnect', reason: `snapshot: ${(error as Error).message}`, delayMs };
      if (!(await delay(delayMs, signal))) return;
      continue;
    }
    yield { type: 'snapshot', ...snapshot, store };
    let held = snapshot.element;
    // One connection per snapshot: ended (and its fetch aborted) when a gap sends us back.
    const connection = new AbortController();
    const onAbort = () => connection.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const events = sseTransport(resources.patches, {
        format: 'ntriples',
        backoff: options.backoff,
        maxEventBytes: options.maxEventBytes,
        stats: options.stats,
        signal: connection.signal,
        ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
        ...(snapshot.id === undefined ? {} : { lastEventId: snapshot.id }),
      });
      for await (const event of events) {
        if (event.type === 'reconnect') {
          yield event;
          continue;
        }
        if (event.type === 'gap') {
          yield { type: 'gap', reason: event.reason, held, prev: undefined };
          break;
        }
        let patch;
        try {
          patch = parseRdfPatch(event.text);
        } catch (error) {
          if (!(error instanceof RdfPatchSyntaxError)) throw error;
          yield { type: 'gap', reason: 'malformed-patch', held, prev: undefined };
          break;
        }
        // Already in the snapshot (an element published while it was read).
        if (patch.id !== undefined && patch.id === held) continue;
        if (patch.prev !== held && !(patch.prev === undefined && held === undefined)) {
          yield { type: 'gap', reason: 'prev-mismatch', held, prev: patch.prev };
          break;
        }
        applyRdfPatch(store, patch);
        held = patch.id;
        const time = patch.added.find((q) => q.subject.value === patch.id && q.predicate.value === streamTerms.generatedAtTime);
        yield {
          type: 'patch',
          id: event.id,
          element: patch.id,
          prev: patch.prev,
          added: patch.added,
          deleted: patch.deleted,
          generatedAt: time === undefined ? undefined : new Date(time.object.value),
          receivedAt: new Date(event.receivedAt),
          bytes: event.text.length,
          store,
        };
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      connection.abort();
    }
  }
}

/**
 * Reads `/latest` as N-Triples into `store` (emptied first); a stream with no element yet (503
 * `PUB_ERR_NO_ELEMENT_YET`) leaves it empty. Throws `RetryableHttpError` or `SubscriptionError`.
 */
async function readSnapshot(
  url: string,
  store: Store,
  fetchImpl: typeof fetch,
  signal: AbortSignal | undefined,
): Promise<{ readonly id: string | undefined; readonly element: string | undefined }> {
  const response = await fetchImpl(url, { headers: { accept: mediaTypes.ntriples }, signal: signal ?? null });
  if (!response.ok) {
    const failure = await httpFailure(response.clone(), url);
    const problem = failure instanceof RetryableHttpError ? ((await response.json().catch(() => undefined)) as { code?: string } | undefined) : undefined;
    if (problem?.code !== 'PUB_ERR_NO_ELEMENT_YET') throw failure;
    store.removeQuads(store.getQuads(null, null, null, null));
    return { id: undefined, element: undefined };
  }
  const quads = new Parser({ format: 'N-Triples', blankNodePrefix: '' }).parse(await response.text());
  store.removeQuads(store.getQuads(null, null, null, null));
  store.addQuads(quads);
  const id = etagElementId(response.headers.get('etag'));
  const element = quads.find((q) => q.predicate.value === streamTerms.generatedAtTime && q.subject.value.endsWith(`/${streamResourceSegments.elements}/${id}`));
  return { id, element: element?.subject.value };
}
