import type { Quad } from '@rdfjs/types';
import { Parser, Writer } from 'n3';
import { elementId, elementIdOfIri, mediaTypes, namespaces, streamTerms } from '@rdf-stream/protocol';

/**
 * One LDES/TREE document of the publisher's history (`{stream}/history`, its time index
 * `{stream}/history/index` or a page `{stream}/history/{epoch}-{n}`), split into what a reader needs: its members, each with its
 * own quads written back as an N-Quads document that the element decoder reads like a live
 * element, and the node the history goes on at. Pure: no I/O.
 */

const TREE = namespaces.tree;
const RDF_TYPE = `${namespaces.rdf}type`;

/** The formats a history document is read in: only those with named graphs keep elements apart. */
export type HistoryDocumentFormat = 'nquads' | 'trig';

/** An element of a history page. */
export interface HistoryMember {
  /** The element's IRI, also the name of its graph. */
  readonly iri: string;
  /** `{epoch}-{seq}` (the SSE id), when the IRI follows the publisher's convention. */
  readonly id: string | undefined;
  readonly epoch: string | undefined;
  readonly seq: number;
  /** `prov:generatedAtTime`, on the server's clock. */
  readonly generatedAt: Date | undefined;
  /** The element as an N-Quads document: its `prov:generatedAtTime` triple, then its graph. */
  readonly text: string;
}

/** A `tree:GreaterThanOrEqualToRelation` of a history document: its members are generated at or after `fromMs`. */
export interface HistoryRelation {
  readonly node: string;
  /** NaN when the relation has no readable `tree:value`. */
  readonly fromMs: number;
}

export interface HistoryPage {
  /** In sequence order, each sequence number once. */
  readonly members: readonly HistoryMember[];
  /**
   * The document's relations to other nodes, oldest `tree:value` first (those without a value
   * last): a page has one, to the next page; the root one, to the oldest page; the time index one
   * to every retained page. The root's link to the index (`rdf-stream:timeIndex`) is no relation.
   */
  readonly relations: readonly HistoryRelation[];
  /**
   * The node to read next: the target of the relation with the smallest value, or undefined on
   * the newest page and on the root (or index) of an empty log.
   */
  readonly next: string | undefined;
}

/**
 * Parses a history document. Members are the objects of `tree:member`; their sequence number
 * is their `rdf-stream:sequenceNumber`, else the one in their IRI (`…/elements/{epoch}-{seq}`);
 * a member with neither cannot be ordered and is left out. A member's text holds the quads of
 * its named graph and its default-graph triples but the page's own (`sequenceNumber`), so that
 * it decodes to the quads a live subscriber gets. Throws n3's error (naming the line) on a
 * document that is not valid RDF in `format`.
 */
export function parseHistoryPage(text: string, options: { readonly baseIri: string; readonly format?: HistoryDocumentFormat }): HistoryPage {
  const quads = new Parser({ format: mediaTypes[options.format ?? 'nquads'], baseIRI: options.baseIri }).parse(text);
  // One pass: named graphs by name, default-graph triples by subject.
  const graphs = new Map<string, Quad[]>();
  const aboutInDefaultGraph = new Map<string, Quad[]>();
  const defaultGraph: Quad[] = [];
  for (const q of quads) {
    const inDefault = q.graph.termType === 'DefaultGraph';
    if (inDefault) defaultGraph.push(q);
    const [index, key] = inDefault ? [aboutInDefaultGraph, q.subject.value] : [graphs, q.graph.value];
    const list = index.get(key);
    if (list === undefined) index.set(key, [q]);
    else list.push(q);
  }
  const memberIris = new Set(defaultGraph.filter((q) => q.predicate.value === `${TREE}member` && q.object.termType === 'NamedNode').map((q) => q.object.value));

  const bySeq = new Map<number, HistoryMember>();
  for (const iri of memberIris) {
    const about = aboutInDefaultGraph.get(iri) ?? [];
    const id = elementIdOfIri(iri);
    const seq = sequenceNumberOf(about) ?? id?.seq;
    if (seq === undefined || bySeq.has(seq)) continue;
    const own = about.filter((q) => q.predicate.value !== streamTerms.sequenceNumber);
    const stamp = own.find((q) => q.predicate.value === streamTerms.generatedAtTime && q.object.termType === 'Literal');
    const generatedAtMs = stamp === undefined ? Number.NaN : Date.parse(stamp.object.value);
    bySeq.set(seq, {
      iri,
      id: id?.epoch === undefined ? undefined : elementId(id.epoch, seq),
      epoch: id?.epoch,
      seq,
      generatedAt: Number.isNaN(generatedAtMs) ? undefined : new Date(generatedAtMs),
      text: new Writer({ format: 'N-Quads' }).quadsToString([...own, ...(graphs.get(iri) ?? [])]),
    });
  }
  const relations = relationsOf(defaultGraph);
  return { members: [...bySeq.values()].sort((a, b) => a.seq - b.seq), relations, next: relations[0]?.node };
}

function sequenceNumberOf(about: readonly Quad[]): number | undefined {
  const literal = about.find((q) => q.predicate.value === streamTerms.sequenceNumber && q.object.termType === 'Literal');
  const seq = literal === undefined ? Number.NaN : Number(literal.object.value);
  return Number.isSafeInteger(seq) && seq > 0 ? seq : undefined;
}

/**
 * The document's `GreaterThanOrEqualToRelation`s to named nodes, by ascending `tree:value` (a
 * relation without a date last). A relation's subject is not checked against the URL fetched:
 * behind a proxy the two differ.
 */
function relationsOf(defaultGraph: readonly Quad[]): HistoryRelation[] {
  // One pass: each relation's properties by its node.
  const properties = new Map<string, Map<string, Quad['object']>>();
  const relations: Quad['subject'][] = [];
  for (const q of defaultGraph) {
    if (q.predicate.value === `${TREE}relation`) relations.push(q.object as Quad['subject']);
    const key = `${q.subject.termType}:${q.subject.value}`;
    let about = properties.get(key);
    if (about === undefined) properties.set(key, (about = new Map()));
    if (!about.has(q.predicate.value) || q.predicate.value !== RDF_TYPE || q.object.value === `${TREE}GreaterThanOrEqualToRelation`) {
      about.set(q.predicate.value, q.object);
    }
  }
  const found: HistoryRelation[] = [];
  for (const relation of relations) {
    const about = properties.get(`${relation.termType}:${relation.value}`);
    const node = about?.get(`${TREE}node`);
    if (about?.get(RDF_TYPE)?.value !== `${TREE}GreaterThanOrEqualToRelation` || node?.termType !== 'NamedNode') continue;
    found.push({ node: node.value, fromMs: Date.parse(about.get(`${TREE}value`)?.value ?? '') });
  }
  return found.sort((a, b) => (Number.isNaN(a.fromMs) ? 1 : Number.isNaN(b.fromMs) ? -1 : a.fromMs - b.fromMs));
}
