import type { Quad } from '@rdfjs/types';
import { DataFactory, Parser } from 'n3';
import { type FormatName, parseElementId, streamResources } from '@rdf-stream/protocol';
import type { EventLog } from '../../log/event-log.js';
import { pageFirstSeq, pageLastSeq, pageOf } from '../../log/log-pages.js';
import { ns, prov, rdf, rdfStream, turtlePrefixes, xsd } from '../../model/vocabulary.js';
import type { Encoding } from '../../render/compress.js';
import { codedEntityTag } from '../../render/headers/etag.js';
import type { JsonLdWriter } from '../../render/jsonld-writer.js';
import { type LoggedElement, writeRdf } from '../../render/render-element.js';
import type { StreamDefinition } from '../stream-hub.js';

/**
 * The stream's history as an LDES 1.0 / TREE view, built from the log's pages (`log-pages.ts`):
 * a root node `{stream}/history` with one relation, to the oldest retained page, pages
 * `{stream}/history/{epoch}-{n}`, each linking to the next once it is full, and a time index
 * `{stream}/history/index` with one relation to every retained page, each saying when the page's
 * first element was generated (so that a client finds the page holding any instant in one
 * request). The root links to the index by `rdf-stream:timeIndex`, not by a relation: a TREE
 * client replaying from the root follows every relation, and reads each page once only if every
 * page is reached by one path. Everything here is pure: `HistoryPageCache` reads the log and
 * calls it.
 */

const { namedNode, literal, quad, blankNode } = DataFactory;

const a = namedNode(rdf.type);
const tree = (local: string) => namedNode(`${ns.tree}${local}`);
const ldes = (local: string) => namedNode(`${ns.ldes}${local}`);
const dateTime = (date: Date) => literal(date.toISOString(), namedNode(xsd.dateTime));

/** Prefixes of the documents' own triples (each element document brings its own). */
const historyPrefixes: Readonly<Record<string, string>> = Object.freeze({
  tree: ns.tree,
  ldes: ns.ldes,
  prov: ns.prov,
  xsd: ns.xsd,
});

/** Where the log stands: all that decides which pages exist and what each holds. */
export interface LogPosition {
  readonly epoch: string;
  readonly pageElements: number;
  /** Undefined when the log holds no element. */
  readonly oldestSeq: number | undefined;
  /** 0 when no element was ever appended. */
  readonly latestSeq: number;
}

export const logPosition = (log: EventLog): LogPosition => ({
  epoch: log.epoch,
  pageElements: log.pageElements,
  oldestSeq: log.oldestSeq,
  latestSeq: log.latestSeq,
});

/** A page's id, the last segment of its IRI: `{epoch}-{n}`, n from 1. */
export interface PageId {
  readonly epoch: string;
  readonly page: number;
}

/** Parses a page id (shaped like an element id); undefined when `value` is not one. */
export function parsePageId(value: string): PageId | undefined {
  const id = parseElementId(value);
  return id === undefined ? undefined : { epoch: id.epoch, page: id.seq };
}

export const historyPageIri = (streamIri: string, epoch: string, page: number) =>
  streamResources(streamIri).historyPage(`${epoch}-${page}`);

/** The page new elements go to: the newest page while it has room, else the next, empty one. */
export function openPage(position: LogPosition): number {
  const { latestSeq, pageElements } = position;
  return latestSeq % pageElements === 0 ? latestSeq / pageElements + 1 : pageOf(latestSeq, pageElements);
}

/** The page of the oldest retained element (the open page when the log is empty). */
export const oldestPage = (position: LogPosition): number =>
  position.oldestSeq === undefined ? openPage(position) : pageOf(position.oldestSeq, position.pageElements);

/** The page of the newest element; `oldestPage - 1` when the log is empty (no page holds one). */
export const newestPage = (position: LogPosition): number =>
  position.oldestSeq === undefined ? oldestPage(position) - 1 : pageOf(position.latestSeq, position.pageElements);

/**
 * What a page id names at `position`. A `closed` page is full and links to the next one; it is
 * `immutable` unless retention or a replica's start left only its tail (then it still changes:
 * it disappears). The `open` page takes the next elements and has no link yet.
 */
export type PageState =
  | { readonly kind: 'gone' }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'closed'; readonly page: number; readonly immutable: boolean }
  | { readonly kind: 'open'; readonly page: number };

export function pageState(position: LogPosition, id: PageId): PageState {
  if (id.epoch !== position.epoch || id.page < oldestPage(position)) return { kind: 'gone' };
  const open = openPage(position);
  if (id.page > open) return { kind: 'not-found' };
  if (id.page === open) return { kind: 'open', page: id.page };
  const whole = position.oldestSeq !== undefined && position.oldestSeq <= pageFirstSeq(id.page, position.pageElements);
  return { kind: 'closed', page: id.page, immutable: whole };
}

/** The sequence numbers a page holds at `position` (an open page: those appended so far). */
export function pageSeqRange(position: LogPosition, page: number): { readonly firstSeq: number; readonly lastSeq: number } {
  const { pageElements, oldestSeq, latestSeq } = position;
  return {
    firstSeq: Math.max(pageFirstSeq(page, pageElements), oldestSeq ?? 1),
    lastSeq: Math.min(pageLastSeq(page, pageElements), latestSeq),
  };
}

/** The documents of the history that are no page. */
export type HistoryNode = 'root' | 'index';

/**
 * What names a history document in `format`, whatever its content coding (the ETag without
 * quotes and coding). A closed page never changes: `{epoch}-p{n}-{format}`. The open page and a
 * page being removed change with the log: their tags name the newest element too. The root
 * (`h`) and the index (`i`) change only when a page is removed or a page receives its first
 * element: their tags name the oldest and the newest page.
 */
export function historyTag(position: LogPosition, state: PageState | HistoryNode, format: FormatName): string {
  const { epoch, latestSeq } = position;
  if (state === 'root' || state === 'index') {
    return `${epoch}-${state === 'root' ? 'h' : 'i'}${oldestPage(position)}-${newestPage(position)}-${format}`;
  }
  if (state.kind === 'closed' && state.immutable) return `${epoch}-p${state.page}-${format}`;
  if (state.kind === 'closed' || state.kind === 'open') return `${epoch}-p${state.page}-${latestSeq}-${format}`;
  throw new RangeError(`a ${state.kind} page has no representation`);
}

/**
 * Strong ETags, one per content coding as `/latest` has them: `"{historyTag}"` for the identity
 * body, `"{historyTag}-br"` and `"{historyTag}-gzip"` for the compressed ones.
 */
export function historyEntityTag(position: LogPosition, state: PageState | HistoryNode, format: FormatName, encoding: Encoding = 'identity'): string {
  return codedEntityTag(historyTag(position, state, format), encoding);
}

/** What the history needs of an element. */
export interface HistoryMember {
  readonly seq: number;
  /** The element's IRI (and its graph's name). */
  readonly graph: string;
  readonly generatedAt: Date;
}

type HistoryStream = Pick<StreamDefinition, 'iri' | 'retainedSeconds'>;

/** When the oldest retained element of a page was generated: where a relation to it starts. */
export interface PageStart {
  readonly page: number;
  readonly startedAt: Date;
}

/**
 * `relation` (a blank node labelled `label`, unique in its document) to `target`: every member
 * reachable from there was generated at or after `from`.
 */
function relationQuads(node: string, target: string, from: Date, label: string): Quad[] {
  const relation = blankNode(label);
  return [
    quad(namedNode(node), tree('relation'), relation),
    quad(relation, a, tree('GreaterThanOrEqualToRelation')),
    quad(relation, tree('path'), namedNode(prov.generatedAtTime)),
    quad(relation, tree('value'), dateTime(from)),
    quad(relation, tree('node'), namedNode(target)),
  ];
}

/**
 * The root node: the event stream and its paths, the retention policy (the oldest element
 * still retained and the configured age limit), the link to the time index and a relation to
 * the oldest retained page that holds an element, `oldest`: its members, and those of every page
 * after it, were generated at or after its first element. Without `oldest` (an empty log) there
 * is no relation yet.
 */
export function historyRootQuads(stream: HistoryStream, epoch: string, oldest: PageStart | undefined): Quad[] {
  const streamNode = namedNode(stream.iri);
  const { history: root, historyIndex } = streamResources(stream.iri);
  const quads: Quad[] = [
    quad(streamNode, a, ldes('EventStream')),
    quad(streamNode, ldes('timestampPath'), namedNode(prov.generatedAtTime)),
    quad(streamNode, ldes('sequencePath'), namedNode(rdfStream.sequenceNumber)),
    quad(streamNode, tree('view'), namedNode(root)),
    quad(namedNode(root), a, tree('Node')),
    quad(namedNode(root), namedNode(rdfStream.timeIndex), namedNode(historyIndex)),
  ];
  if (oldest !== undefined || stream.retainedSeconds > 0) {
    const policy = blankNode('retention');
    quads.push(quad(namedNode(root), ldes('retentionPolicy'), policy));
    if (oldest !== undefined) quads.push(quad(policy, ldes('startingFrom'), dateTime(oldest.startedAt)));
    if (stream.retainedSeconds > 0) {
      quads.push(quad(policy, ldes('fullLogDuration'), literal(`PT${stream.retainedSeconds}S`, namedNode(`${ns.xsd}duration`))));
    }
  }
  if (oldest !== undefined) quads.push(...relationQuads(root, historyPageIri(stream.iri, epoch, oldest.page), oldest.startedAt, 'relation'));
  return quads;
}

/**
 * The time index: a node with one relation to each retained page that holds an element,
 * `pages`, oldest first: its members, and those of every page after it, were generated at or
 * after the page's first element. A client looking for an instant goes to the last page that
 * started before it. Without pages (an empty log) there is no relation yet.
 */
export function historyIndexQuads(stream: HistoryStream, epoch: string, pages: readonly PageStart[]): Quad[] {
  const index = streamResources(stream.iri).historyIndex;
  const quads: Quad[] = [quad(namedNode(index), a, tree('Node'))];
  for (const { page, startedAt } of pages) quads.push(...relationQuads(index, historyPageIri(stream.iri, epoch, page), startedAt, `p${page}`));
  return quads;
}

/**
 * What a page that retention removed less than the grace period ago answers: a node without
 * members whose one relation leads to the oldest retained page, `oldest`, so that a client that
 * read a root from before the removal (from a cache) goes on where the history now starts.
 */
export function removedPageQuads(stream: HistoryStream, epoch: string, page: number, oldest: PageStart): Quad[] {
  const node = historyPageIri(stream.iri, epoch, page);
  return [quad(namedNode(node), a, tree('Node')), ...relationQuads(node, historyPageIri(stream.iri, epoch, oldest.page), oldest.startedAt, 'relation')];
}

/**
 * A page's own triples: it is a node, its members and their sequence numbers, and, once
 * `closed`, the relation to the next page: its members were generated at or after this page's
 * last one (elements are appended in the order of their `generatedAt`).
 */
export function historyPageQuads(
  stream: HistoryStream,
  epoch: string,
  page: number,
  members: readonly HistoryMember[],
  closed: boolean,
): Quad[] {
  const node = historyPageIri(stream.iri, epoch, page);
  const quads: Quad[] = [quad(namedNode(node), a, tree('Node'))];
  const last = members.at(-1);
  if (closed && last !== undefined) quads.push(...relationQuads(node, historyPageIri(stream.iri, epoch, page + 1), last.generatedAt, 'relation'));
  for (const member of members) {
    quads.push(
      quad(namedNode(stream.iri), tree('member'), namedNode(member.graph)),
      quad(namedNode(member.graph), namedNode(rdfStream.sequenceNumber), literal(String(member.seq), namedNode(xsd.integer))),
    );
  }
  return quads;
}

/**
 * A history document: the node's own `quads`, then each element's document as the log keeps
 * it, so that a page costs no re-serialisation of its members. Turtle and TriG
 * allow `@prefix` again anywhere, and the line formats concatenate; JSON-LD puts the header's
 * nodes and each element's top node in one `@graph`, where an element's own `@graph` stays its
 * named graph.
 */
export function historyDocument(quads: readonly Quad[], elements: readonly LoggedElement[], format: FormatName, jsonLd: JsonLdWriter): Buffer {
  if (format === 'jsonld') {
    const header = JSON.parse(jsonLd.write(quads)) as JsonObject;
    const graph = [header, ...elements.map((element) => JSON.parse(elementDocument(element, format, jsonLd)) as JsonObject)].flatMap(topNodes);
    return Buffer.from(JSON.stringify({ '@context': header['@context'] ?? null, '@graph': graph }));
  }
  const documents = [writeRdf(quads, format, historyPrefixes), ...elements.map((element) => elementDocument(element, format, jsonLd))];
  return Buffer.from(documents.map((document) => (document.endsWith('\n') ? document : `${document}\n`)).join(''));
}

type JsonObject = Record<string, unknown>;

/** The node objects of a JSON-LD document without its context (its `@graph`, or itself). */
function topNodes(document: JsonObject): unknown[] {
  const { '@context': _context, ...node } = document;
  const keys = Object.keys(node);
  return keys.length === 1 && keys[0] === '@graph' ? (node['@graph'] as unknown[]) : [node];
}

/**
 * An element's document in `format`. Blank node labels are scoped to a document: an element
 * holding blank nodes is written again with labels of its own, `e{seq}_…`, so that two
 * elements' `_:b0` stay two nodes on one page. Elements written since ingest skolemises blank
 * nodes hold none (their N-Quads have no `_:` outside literals, and a literal that has one only
 * costs a needless rewrite); a log kept from before may still hold such elements.
 */
function elementDocument(element: LoggedElement, format: FormatName, jsonLd: JsonLdWriter): string {
  if (!element.documents.nquads.includes('_:')) return element.documents[format].toString('utf8');
  const nquads = element.documents.nquads.toString('utf8');
  const quads = new Parser({ format: 'application/n-quads', blankNodePrefix: `e${element.seq}_` }).parse(nquads);
  return format === 'jsonld' ? jsonLd.write(quads) : writeRdf(quads, format, turtlePrefixes);
}
