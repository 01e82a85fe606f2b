import { type FormatName, formatNames } from '@rdf-stream/protocol';
import { compressOnce, type EncodedBodies, type Encoding, encodings } from '../../render/compress.js';
import { entityTag } from '../../render/headers/etag.js';
import type { LoggedElement } from '../../render/render-element.js';
import type { LongPollWaiters } from './long-poll-waiters.js';

/** The latest element in every format and content coding, with its validators. */
export interface LatestElement {
  readonly seq: number;
  readonly generatedAt: Date;
  readonly graph: string;
  readonly bodies: Readonly<Record<FormatName, EncodedBodies>>;
  readonly etags: Readonly<Record<FormatName, Readonly<Record<Encoding, string>>>>;
  /** False if compression failed: only the identity coding may be served. */
  readonly compressed: boolean;
}

/**
 * Builds `/latest`'s representations of a logged element: each format's document (made from the
 * documents the log keeps, not a new serialisation) compressed once per content coding, on the
 * thread pool.
 */
export async function latestElement(element: LoggedElement, epoch: string, onError: (error: unknown) => void): Promise<LatestElement> {
  let compressed = true;
  // Every format at once, in one trip through the thread pool: the element is served when the
  // last is done. Each trip back costs a turn of the event loop, which is busiest just then
  // (pollers ask for the element as it is due): five formats one after the other were served
  // 17–323 ms after generation at 8 000 smart pollers, all at once 13–127 ms (docs/bench-results.md).
  // The ten compressions of a few kB take about a millisecond of the pool's threads in all.
  const encoded = await Promise.all(
    formatNames.map((format) => {
      const body = latestDocument(element, format);
      return compressOnce(body).catch((error: unknown) => {
        // Practically only out of memory; the element is durable already, so serve it uncompressed.
        compressed = false;
        onError(error);
        return Object.freeze({ br: body, gzip: body, identity: body });
      });
    }),
  );
  const bodies = {} as Record<FormatName, EncodedBodies>;
  const etags = {} as Record<FormatName, Record<Encoding, string>>;
  formatNames.forEach((format, index) => {
    bodies[format] = encoded[index] as EncodedBodies;
    etags[format] = Object.fromEntries(
      encodings.map((encoding) => [encoding, entityTag(epoch, element.seq, format, encoding)]),
    ) as Record<Encoding, string>;
  });
  return { seq: element.seq, generatedAt: element.generatedAt, graph: element.graph, bodies, etags, compressed };
}

/**
 * `/latest`'s document of an element in `format`. Formats without graphs hold the element's
 * triples in the default graph already. Formats with graphs carry the element (its named graph
 * and `prov:generatedAtTime`, as SSE and `/elements/{id}` do) **and** the same triples in the
 * default graph, so that a plain SPARQL query over `/latest` (Comunica with default settings,
 * which asks for N-Quads) sees the observations. Built from the logged documents: concatenating the
 * graph-less document is valid N-Quads and TriG; JSON-LD gets the observations at top level
 * beside the element's named-graph node.
 */
export function latestDocument(element: LoggedElement, format: FormatName): Buffer {
  const { documents } = element;
  if (format === 'nquads') return Buffer.concat([documents.ntriples, documents.nquads]);
  if (format === 'trig') return Buffer.concat([documents.turtle, documents.trig]);
  if (format !== 'jsonld') return documents[format];
  const { '@context': context, ...node } = JSON.parse(documents.jsonld.toString('utf8')) as Record<string, unknown>;
  const observations = Array.isArray(node['@graph']) ? (node['@graph'] as unknown[]) : [];
  return Buffer.from(JSON.stringify({ '@context': context, '@graph': [...observations, node] }));
}

/**
 * Whether two logged elements are the same: the same object (the file and memory logs keep what
 * was appended), or the same number and documents (a shared log decodes what it reads, and an
 * element another instance appended under a number this one rendered for has other documents).
 */
function sameElement(a: LoggedElement, b: LoggedElement): boolean {
  if (a === b) return true;
  if (a.seq !== b.seq || a.graph !== b.graph) return false;
  return formatNames.every((format) => a.documents[format].equals(b.documents[format]));
}

/** How `/latest`'s representations of an element are made (`latestElement`; a stand-in in tests). */
export type CompressLatest = (element: LoggedElement, epoch: string, onError: (error: unknown) => void) => Promise<LatestElement>;

/**
 * What `/latest` serves: the newest durable element, compressed. Offered elements are
 * compressed off the publishing path and coalesced: when elements become durable faster than
 * they compress (ingest bursts), the ones superseded meanwhile are never compressed.
 *
 * The writer may `prepare` an element as soon as it is rendered, before its append is durable:
 * its compression then runs beside the log's write and sync, and the element is served when it
 * is durable instead of a compression later. At most one element is prepared at a time (what
 * is rendered while one compresses is left to `offer`, which coalesces); a prepared element
 * that never becomes durable (a failed append) is dropped by the next preparation, and its
 * compression was the only work lost.
 */
export class LatestElementCache {
  #epoch: string;
  readonly #waiters: LongPollWaiters;
  readonly #onError: (error: unknown) => void;
  #current: LatestElement | undefined;
  #pending: LoggedElement | undefined;
  #refreshing = false;
  #reachedWaiters: Array<{ readonly seq: number; readonly resolve: () => void }> = [];
  readonly #servedListeners: Array<(latest: LatestElement) => void> = [];
  readonly #compress: CompressLatest;
  /** The element whose compression `prepare` started. */
  #prepared: { readonly element: LoggedElement; readonly epoch: string; readonly latest: Promise<LatestElement>; settled: boolean } | undefined;

  constructor(epoch: string, waiters: LongPollWaiters, onError: (error: unknown) => void, compress: CompressLatest = latestElement) {
    this.#epoch = epoch;
    this.#waiters = waiters;
    this.#onError = onError;
    this.#compress = compress;
  }

  /**
   * Starts compressing `element` (rendered, its append not durable yet), unless another
   * preparation is still compressing; `offer` of the same element, once durable, uses it.
   */
  prepare(element: LoggedElement): void {
    if (this.#prepared !== undefined && !this.#prepared.settled) return;
    const prepared = { element, epoch: this.#epoch, latest: this.#compress(element, this.#epoch, this.#onError), settled: false };
    // A failure is seen, and answered by compressing again, where the element is offered.
    prepared.latest.then(
      () => (prepared.settled = true),
      () => (prepared.settled = true),
    );
    this.#prepared = prepared;
  }

  get current(): LatestElement | undefined {
    return this.#current;
  }

  /** Makes `element` (durable) the latest once compressed, unless a newer one is served first. */
  offer(element: LoggedElement): void {
    if ((this.#current?.seq ?? 0) >= element.seq) return;
    this.#pending = element;
    if (!this.#refreshing) void this.#refresh();
  }

  /** Serves `latest`, compressed elsewhere (a cluster worker gets the writer's bytes). */
  set(latest: LatestElement): void {
    if ((this.#current?.seq ?? 0) >= latest.seq) return;
    if ((this.#pending?.seq ?? 0) <= latest.seq) this.#pending = undefined;
    this.#serve(latest);
  }

  /**
   * Forgets the served element for a new life of the log (`EventLog.onEpochChanged`): `/latest`
   * answers 404 until the new epoch's first element is offered.
   */
  restart(epoch: string): void {
    this.#epoch = epoch;
    this.#current = undefined;
    this.#pending = undefined;
    this.#prepared = undefined;
  }

  /** Registers `listener`, called with each element `/latest` starts serving. */
  onServed(listener: (latest: LatestElement) => void): void {
    this.#servedListeners.push(listener);
  }

  /** Resolves once `/latest` serves element `seq` or a newer one. */
  reached(seq: number): Promise<void> {
    if ((this.#current?.seq ?? 0) >= seq) return Promise.resolve();
    return new Promise((resolve) => this.#reachedWaiters.push({ seq, resolve }));
  }

  async #refresh(): Promise<void> {
    this.#refreshing = true;
    try {
      for (let next = this.#pending; next !== undefined; next = this.#pending) {
        this.#pending = undefined;
        const latest = await this.#compressed(next);
        if ((this.#current?.seq ?? 0) < latest.seq) this.#serve(latest);
      }
    } finally {
      this.#refreshing = false;
    }
  }

  /** `element` compressed: by its preparation when there was one, else now. */
  async #compressed(element: LoggedElement): Promise<LatestElement> {
    const prepared = this.#prepared;
    if (prepared !== undefined && prepared.epoch === this.#epoch && sameElement(prepared.element, element)) {
      this.#prepared = undefined;
      try {
        return await prepared.latest;
      } catch {
        // Not expected (compression failures are served uncompressed): compress it again.
      }
    }
    return this.#compress(element, this.#epoch, this.#onError);
  }

  #serve(latest: LatestElement): void {
    this.#current = latest;
    this.#waiters.release('element').catch(this.#onError);
    for (const listener of this.#servedListeners) listener(latest);
    const waiting = this.#reachedWaiters;
    this.#reachedWaiters = [];
    for (const waiter of waiting) {
      if (waiter.seq <= latest.seq) waiter.resolve();
      else this.#reachedWaiters.push(waiter);
    }
  }
}
