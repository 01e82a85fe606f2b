import { LRUCache } from 'lru-cache';
import type { FormatName } from '@rdf-stream/protocol';
import type { EventLog } from '../../log/event-log.js';
import type { JsonLdWriter } from '../../render/jsonld-writer.js';
import {
  historyDocument,
  historyPageQuads,
  historyRootQuads,
  type LogPosition,
  type PageState,
  pageSeqRange,
} from './history-pages.js';
import type { StreamDefinition } from '../stream-hub.js';

/** A stream whose history is served (a `StreamHub`). */
export interface HistorySource {
  readonly definition: StreamDefinition;
  readonly log: EventLog;
}

/** A rendered history document. */
export interface HistoryBody {
  readonly body: Buffer;
  /** When a page's newest element was generated; undefined for the root and an empty page. */
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

/**
 * Reads history documents from the logs and renders each immutable page at most once per
 * format while it is cached: a bounded LRU of `maxBytes` for all streams together (0: none),
 * which also shares one rendering among concurrent requests. The root and the pages that still
 * change are memoised per stream and format until the log moves.
 */
export class HistoryPageCache {
  readonly #jsonLd: JsonLdWriter;
  readonly #closed: LRUCache<string, HistoryBody, ClosedPageRequest> | undefined;
  readonly #changing = new Map<string, { readonly version: string; readonly rendered: HistoryBody }>();

  constructor(jsonLd: JsonLdWriter, maxBytes: number) {
    this.#jsonLd = jsonLd;
    if (maxBytes > 0) {
      this.#closed = new LRUCache<string, HistoryBody, ClosedPageRequest>({
        maxSize: maxBytes,
        sizeCalculation: (rendered) => rendered.body.length + entryOverheadBytes,
        fetchMethod: (_key, _stale, { context }) => this.#renderPage(context),
      });
    }
  }

  /** Bytes of immutable pages held now. */
  get cachedBytes(): number {
    return this.#closed?.calculatedSize ?? 0;
  }

  /**
   * The root node at `position`; undefined if retention removed the oldest element since
   * `position` was taken (take a new one and ask again).
   */
  async root(source: HistorySource, position: LogPosition, format: FormatName): Promise<HistoryBody | undefined> {
    const { definition } = source;
    return this.#memoised(`${definition.id}\nroot\n${format}`, versionOf(position, 0), async () => {
      const oldest = position.oldestSeq === undefined ? undefined : await source.log.get(position.oldestSeq);
      if (position.oldestSeq !== undefined && oldest === undefined) return undefined;
      const quads = historyRootQuads(definition, position.epoch, position.pageElements, oldest);
      return { body: historyDocument(quads, [], format, this.#jsonLd), lastModified: undefined };
    });
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
    return { body: historyDocument(quads, elements, format, this.#jsonLd), lastModified: elements.at(-1)?.generatedAt };
  }

  async #memoised(
    key: string,
    version: string,
    render: () => Promise<HistoryBody | undefined>,
  ): Promise<HistoryBody | undefined> {
    const memo = this.#changing.get(key);
    if (memo?.version === version) return memo.rendered;
    const rendered = await render();
    if (rendered !== undefined) this.#changing.set(key, { version, rendered });
    return rendered;
  }
}

/** Everything a changing document depends on. */
const versionOf = (position: LogPosition, page: number) =>
  `${position.epoch}-${page}-${position.oldestSeq ?? 0}-${position.latestSeq}`;
