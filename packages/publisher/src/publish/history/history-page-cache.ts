import { LRUCache } from 'lru-cache';
import type { FormatName } from '@rdf-stream/protocol';
import type { EventLog } from '../../log/event-log.js';
import { compressOnce, type EncodedBodies } from '../../render/compress.js';
import type { JsonLdWriter } from '../../render/jsonld-writer.js';
import {
  historyDocument,
  historyIndexQuads,
  historyPageQuads,
  historyRootQuads,
  type LogPosition,
  newestPage,
  oldestPage,
  type PageStart,
  type PageState,
  pageSeqRange,
  removedPageQuads,
} from './history-pages.js';
import type { StreamDefinition } from '../stream-hub.js';

/** A stream whose history is served (a `StreamHub`). */
export interface HistorySource {
  readonly definition: StreamDefinition;
  readonly log: EventLog;
}

/** A rendered history document, in every content coding. */
export interface HistoryBody {
  readonly bodies: EncodedBodies;
  /** False if compression failed: only the identity coding may be served. */
  readonly compressed: boolean;
  /** When a page's newest element was generated; undefined for the root, the index and an empty page. */
  readonly lastModified: Date | undefined;
}

type ReadablePage = Extract<PageState, { kind: 'open' | 'closed' }>;

interface ClosedPageRequest {
  readonly source: HistorySource;
  readonly position: LogPosition;
  readonly state: ReadablePage;
  readonly format: FormatName;
}

/** Bytes counted for an entry beyond its body (key, record): keeps tiny pages from looking free. */
const entryOverheadBytes = 256;

/** The bytes a rendering holds: each distinct body once (a failed compression shares identity's). */
export function historyBodyBytes({ bodies }: HistoryBody): number {
  return [...new Set([bodies.identity, bodies.br, bodies.gzip])].reduce((total, body) => total + body.length, 0);
}

/**
 * Reads history documents from the logs and renders each immutable page at most once per
 * format while it is cached, and compresses each rendering once (br and gzip, on the thread
 * pool, as `/latest` is): a bounded LRU of `maxBytes` for all streams together, counting every
 * coding's bytes (0: none), which also shares one rendering among concurrent requests. The root,
 * the time index and the pages that still change are memoised per stream and format until the
 * log moves (the root and the index: until a page is removed or starts); concurrent requests for
 * one version share its rendering too. When each retained page started is kept per stream (one
 * date a retained page), so that the index reads only the pages that are new since it was last
 * rendered.
 */
export class HistoryPageCache {
  readonly #jsonLd: JsonLdWriter;
  readonly #onCompressionError: (error: unknown) => void;
  readonly #closed: LRUCache<string, HistoryBody, ClosedPageRequest> | undefined;
  readonly #changing = new Map<string, { readonly version: string; readonly rendered: Promise<HistoryBody | undefined> }>();
  readonly #starts = new Map<string, { readonly epoch: string; readonly byPage: Map<number, Date> }>();

  constructor(jsonLd: JsonLdWriter, maxBytes: number, onCompressionError: (error: unknown) => void = () => {}) {
    this.#jsonLd = jsonLd;
    this.#onCompressionError = onCompressionError;
    if (maxBytes > 0) {
      this.#closed = new LRUCache<string, HistoryBody, ClosedPageRequest>({
        maxSize: maxBytes,
        sizeCalculation: (rendered) => historyBodyBytes(rendered) + entryOverheadBytes,
        fetchMethod: (_key, _stale, { context }) => this.#renderPage(context),
      });
    }
  }

  /** Bytes of immutable pages held now, in all their codings. */
  get cachedBytes(): number {
    return this.#closed?.calculatedSize ?? 0;
  }

  /**
   * The root node at `position`; undefined if retention removed a page since `position` was
   * taken (take a new one and ask again).
   */
  async root(source: HistorySource, position: LogPosition, format: FormatName): Promise<HistoryBody | undefined> {
    const { definition } = source;
    const version = `${position.epoch}-${oldestPage(position)}-${newestPage(position)}`;
    return this.#memoised(`${definition.id}\nroot\n${format}`, version, async () => {
      let oldest: PageStart | undefined;
      if (newestPage(position) >= oldestPage(position)) {
        oldest = await this.#pageStart(source, this.#startsOf(source, position), oldestPage(position));
        if (oldest === undefined) return undefined;
      }
      return this.#encoded(historyDocument(historyRootQuads(definition, position.epoch, oldest), [], format, this.#jsonLd), undefined);
    });
  }

  /**
   * The time index at `position`; undefined if retention removed a page since `position` was
   * taken (take a new one and ask again).
   */
  async index(source: HistorySource, position: LogPosition, format: FormatName): Promise<HistoryBody | undefined> {
    const { definition } = source;
    const version = `${position.epoch}-${oldestPage(position)}-${newestPage(position)}`;
    return this.#memoised(`${definition.id}\nindex\n${format}`, version, async () => {
      const known = this.#startsOf(source, position);
      const starts: PageStart[] = [];
      for (let page = oldestPage(position); page <= newestPage(position); page++) {
        const start = await this.#pageStart(source, known, page);
        if (start === undefined) return undefined;
        starts.push(start);
      }
      return this.#encoded(historyDocument(historyIndexQuads(definition, position.epoch, starts), [], format, this.#jsonLd), undefined);
    });
  }

  /**
   * What page `page`, removed by retention within the grace period, answers at `position`: a
   * node leading to the oldest retained page. Undefined when the log holds no element.
   */
  async removedPage(source: HistorySource, position: LogPosition, page: number, format: FormatName): Promise<HistoryBody | undefined> {
    const { definition } = source;
    const oldest = oldestPage(position);
    return this.#memoised(`${definition.id}\nremoved\n${format}`, `${position.epoch}-${page}-${oldest}`, async () => {
      const start = position.oldestSeq === undefined ? undefined : await this.#pageStart(source, this.#startsOf(source, position), oldest);
      if (start === undefined) return undefined;
      return this.#encoded(historyDocument(removedPageQuads(definition, position.epoch, page, start), [], format, this.#jsonLd), undefined);
    });
  }

  /**
   * When each page started (its oldest retained element) as far as read already, for the
   * stream's log at `position`: pages removed since are forgotten first.
   */
  #startsOf(source: HistorySource, position: LogPosition): Map<number, Date> {
    const { id } = source.definition;
    let known = this.#starts.get(id);
    if (known?.epoch !== position.epoch) {
      known = { epoch: position.epoch, byPage: new Map() };
      this.#starts.set(id, known);
    }
    const oldest = oldestPage(position);
    for (const page of known.byPage.keys()) if (page < oldest) known.byPage.delete(page);
    return known.byPage;
  }

  /** When `page` started, read from the log once; undefined if it holds no retained element. */
  async #pageStart(source: HistorySource, starts: Map<number, Date>, page: number): Promise<PageStart | undefined> {
    let startedAt = starts.get(page);
    if (startedAt === undefined) {
      startedAt = await source.log.pageStartedAt(page);
      if (startedAt === undefined) return undefined;
      starts.set(page, startedAt);
    }
    return { page, startedAt };
  }

  /**
   * A page as `state` describes it at `position`; undefined if retention removed (part of) it
   * since `position` was taken.
   */
  async page(source: HistorySource, position: LogPosition, state: ReadablePage, format: FormatName): Promise<HistoryBody | undefined> {
    if (state.kind === 'closed' && state.immutable) {
      const request: ClosedPageRequest = { source, position, state, format };
      const key = `${source.definition.id}\n${position.epoch}-${state.page}\n${format}`;
      return this.#closed === undefined ? this.#renderPage(request) : this.#closed.fetch(key, { context: request });
    }
    return this.#memoised(`${source.definition.id}\npage\n${format}`, versionOf(position, state.page), () =>
      this.#renderPage({ source, position, state, format }),
    );
  }

  async #renderPage({ source, position, state, format }: ClosedPageRequest): Promise<HistoryBody | undefined> {
    const { firstSeq, lastSeq } = pageSeqRange(position, state.page);
    const count = Math.max(0, lastSeq - firstSeq + 1);
    // Elements appended since `position` was taken belong to a later version of an open page.
    const elements = count === 0 ? [] : (await source.log.read(firstSeq, count)).filter((element) => element.seq <= lastSeq);
    if (elements.length !== count) return undefined;
    const quads = historyPageQuads(source.definition, position.epoch, state.page, elements, state.kind === 'closed');
    return this.#encoded(historyDocument(quads, elements, format, this.#jsonLd), elements.at(-1)?.generatedAt);
  }

  /** `body` compressed once; served uncompressed only if compression fails (out of memory). */
  async #encoded(body: Buffer, lastModified: Date | undefined): Promise<HistoryBody> {
    try {
      return { bodies: await compressOnce(body), compressed: true, lastModified };
    } catch (error) {
      this.#onCompressionError(error);
      return { bodies: Object.freeze({ br: body, gzip: body, identity: body }), compressed: false, lastModified };
    }
  }

  /**
   * The rendering of `version` under `key`, started once: requests that arrive while it renders
   * wait for the same promise. An undefined answer (the log moved) is not kept.
   */
  #memoised(key: string, version: string, render: () => Promise<HistoryBody | undefined>): Promise<HistoryBody | undefined> {
    const memo = this.#changing.get(key);
    if (memo?.version === version) return memo.rendered;
    const rendered = render();
    const entry = { version, rendered };
    this.#changing.set(key, entry);
    const forget = () => {
      if (this.#changing.get(key) === entry) this.#changing.delete(key);
    };
    rendered.then((result) => {
      if (result === undefined) forget();
    }, forget);
    return rendered;
  }
}

/** Everything a changing document depends on. */
const versionOf = (position: LogPosition, page: number) =>
  `${position.epoch}-${page}-${position.oldestSeq ?? 0}-${position.latestSeq}`;
