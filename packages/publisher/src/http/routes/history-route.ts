import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type FormatName, HISTORY_INDEX_SEGMENT, streamPath } from '@rdf-stream/protocol';
import { PublisherError } from '../../errors.js';
import { type HistoryBody, HistoryPageCache, type HistorySource } from '../../publish/history/history-page-cache.js';
import {
  historyEntityTag,
  type HistoryNode,
  historyTag,
  type LogPosition,
  logPosition,
  oldestPage,
  openPage,
  type PageState,
  pageState,
  parsePageId,
} from '../../publish/history/history-pages.js';
import { RemovedPages } from '../../publish/history/removed-pages.js';
import { cacheHeaders } from '../../render/headers/cache-headers.js';
import type { Encoding } from '../../render/compress.js';
import { ifNoneMatchNamesFile } from '../../render/headers/etag.js';
import { acceptsIdentity, documentCodingsNotAcceptable, type NegotiationCache } from '../../render/headers/negotiate.js';
import { contentType } from '../../render/output-formats.js';
import { type AppContext, hubOf } from '../app-context.js';
import { negotiatedFormat } from '../static-document-reply.js';

const immutable = 'public, max-age=31536000, immutable';
/** Retention may remove what a snapshot of the log named before it was read: read again. */
const maxReadAttempts = 3;

/** What a page removed within the grace period answers: it will soon be 410, and is cheap to ask again. */
const removedPageCacheControl = 'no-cache';

const vary = 'Accept, Accept-Encoding';

/**
 * The LDES history (`GET /streams/{id}/history`, its time index `…/history/index` and its pages
 * `…/history/{epoch}-{n}`), read from the log. Full pages are immutable; the root, the index and
 * the open page are cacheable like `/latest`, until the next element (the root and the index:
 * never longer than `historyGraceSeconds`). A page
 * retention removed less than `historyGraceSeconds` ago leads to the oldest retained page, so
 * that a client holding a cached root never meets a 410.
 */
export function historyRoute(app: FastifyInstance, context: AppContext): void {
  const { config, negotiation } = context;
  const now = context.now ?? Date.now;
  const pages = new HistoryPageCache(context.jsonLd, config.historyCacheBytes, (error) =>
    app.log.error({ err: error }, 'history document served uncompressed: compression failed'),
  );
  const graceMs = config.historyGraceSeconds * 1000;
  const removedPages = new Map<string, RemovedPages>();
  const removedPagesOf = (hub: HistorySource): RemovedPages => {
    const position = logPosition(hub.log);
    let removed = removedPages.get(hub.definition.id);
    if (removed === undefined) {
      removed = new RemovedPages(graceMs);
      removedPages.set(hub.definition.id, removed);
    }
    removed.observe(position.epoch, oldestPage(position), now());
    return removed;
  };
  for (const hub of context.hubs.values()) {
    removedPagesOf(hub);
    // The memory log removes pages as it appends; the file log in its retention passes.
    hub.log.onAppended(() => removedPagesOf(hub));
  }

  /**
   * Freshness of a document that changes with the next element (the root, the index, the open
   * page). The root's and the index's is bounded by the grace period: no cache keeps them longer
   * than a page they name answers.
   */
  const changingHeaders = (source: HistorySource, nowMs: number, limitSeconds?: number): Record<string, string> => {
    const latest = source.log.latest();
    if (latest === undefined) return { 'cache-control': 'public, max-age=0' };
    const freshness = {
      generatedAtMs: latest.generatedAt.getTime(),
      expectedIntervalMs: source.definition.expectedIntervalMs,
      microCacheSeconds: config.microCacheSeconds,
      ...(limitSeconds === undefined ? {} : { limitSeconds }),
    };
    return { ...cacheHeaders(freshness, nowMs) };
  };

  /** The root or the time index, which change only when a page is removed or starts. */
  const node = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply, kind: HistoryNode) => {
    const hub = hubOf(context, request.params.id);
    const format = negotiatedFormat(request, negotiation);
    const encoding = negotiatedEncoding(request, negotiation);
    removedPagesOf(hub);
    for (let attempt = 1; ; attempt++) {
      const position = logPosition(hub.log);
      const tag = historyTag(position, kind, format);
      reply.headers({ ...changingHeaders(hub, Date.now(), config.historyGraceSeconds), etag: historyEntityTag(position, kind, format, encoding), vary });
      if (ifNoneMatchNamesFile(request.headers['if-none-match'], tag)) return reply.code(304).send();
      const rendered = kind === 'root' ? await pages.root(hub, position, format) : await pages.index(hub, position, format);
      if (rendered !== undefined || attempt === maxReadAttempts) return send(request, reply, rendered, format, encoding, tag);
    }
  };

  app.get<{ Params: { id: string } }>(streamPath(':id', 'history'), (request, reply) => node(request, reply, 'root'));
  // A static segment: the router prefers it to the page id parameter below.
  app.get<{ Params: { id: string } }>(`${streamPath(':id', 'history')}/${HISTORY_INDEX_SEGMENT}`, (request, reply) => node(request, reply, 'index'));

  app.get<{ Params: { id: string; pageId: string } }>(`${streamPath(':id', 'history')}/:pageId`, async (request, reply) => {
    const hub = hubOf(context, request.params.id);
    const format = negotiatedFormat(request, negotiation);
    const encoding = negotiatedEncoding(request, negotiation);
    const id = parsePageId(request.params.pageId);
    const removed = removedPagesOf(hub);
    for (let attempt = 1; ; attempt++) {
      const position = logPosition(hub.log);
      const state: PageState = id === undefined ? { kind: 'not-found' } : pageState(position, id);
      if (state.kind === 'gone' && id !== undefined && removed.removedAtMs(id.epoch, id.page, now()) !== undefined) {
        const rendered = await pages.removedPage(hub, position, id.page, format);
        if (rendered !== undefined) {
          reply.headers({ 'cache-control': removedPageCacheControl, vary });
          return send(request, reply, rendered, format, encoding);
        }
      }
      if (state.kind === 'gone' || state.kind === 'not-found') throw pageError(state.kind, position);
      const tag = historyTag(position, state, format);
      const etag = historyEntityTag(position, state, format, encoding);
      const fixed = state.kind === 'closed' && state.immutable;
      reply.headers({ ...(fixed ? { 'cache-control': immutable } : changingHeaders(hub, Date.now())), etag, vary });
      if (ifNoneMatchNamesFile(request.headers['if-none-match'], tag)) return reply.code(304).send();
      const rendered = await pages.page(hub, position, state, format);
      if (rendered !== undefined) {
        if (fixed && rendered.lastModified !== undefined) reply.header('last-modified', rendered.lastModified.toUTCString());
        return send(request, reply, rendered, format, encoding, tag);
      }
      // Retention removed the page meanwhile: the next snapshot says it is gone.
      if (attempt === maxReadAttempts) throw pageError('gone', logPosition(hub.log));
    }
  });
}

/** The content coding `Accept-Encoding` asks for (406 when it refuses all three), as `/latest` negotiates it. */
function negotiatedEncoding(request: FastifyRequest, negotiation: NegotiationCache): Encoding {
  const encoding = negotiation.encoding(request.headers['accept-encoding']);
  if (encoding === undefined) throw documentCodingsNotAcceptable();
  return encoding;
}

/**
 * Sends `rendered` in `encoding`, compressed when it was rendered, never here. If compression
 * failed, the identity body (and its ETag, for a document with `tag`) unless the client refuses it.
 */
function send(
  request: FastifyRequest,
  reply: FastifyReply,
  rendered: HistoryBody | undefined,
  format: FormatName,
  encoding: Encoding,
  tag?: string,
): FastifyReply {
  if (rendered === undefined) throw new Error('the history kept changing while it was read');
  let coding = encoding;
  if (!rendered.compressed && coding !== 'identity') {
    if (!acceptsIdentity(request.headers['accept-encoding'])) throw documentCodingsNotAcceptable();
    coding = 'identity';
    if (tag !== undefined) reply.header('etag', `"${tag}"`);
  }
  if (coding !== 'identity') reply.header('content-encoding', coding);
  return reply.header('content-type', contentType(format)).send(rendered.bodies[coding]);
}

function pageError(kind: 'gone' | 'not-found', position: LogPosition): PublisherError {
  const first = oldestPage(position);
  const last = openPage(position);
  return new PublisherError(
    kind === 'gone' ? 'PUB_ERR_PAGE_GONE' : 'PUB_ERR_PAGE_NOT_FOUND',
    `Pages: ${position.epoch}-${first} to ${position.epoch}-${last}`,
    { epoch: position.epoch, oldestPage: first, openPage: last },
  );
}
