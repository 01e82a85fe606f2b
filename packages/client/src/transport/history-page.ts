import type { Quad } from '@rdfjs/types';
import { Parser, Writer } from 'n3';
import { elementId, elementIdOfIri, mediaTypes, namespaces, streamTerms } from '@rdf-stream/protocol';

/**
 * One LDES/TREE document of the publisher's history (`{stream}/history` or a page
 * `{stream}/history/{epoch}-{n}`), split into what a reader needs: its members, each with its
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

export interface HistoryPage {
  /** In sequence order, each sequence number once. */
  readonly members: readonly HistoryMember[];
  /**
   * The node to read next: the target of the document's `tree:GreaterThanOrEqualToRelation`
   * (on `prov:generatedAtTime`), or undefined on the newest page and on the root of an empty log.
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
  return { members: [...bySeq.values()].sort((a, b) => a.seq - b.seq), next: nextNode(defaultGraph) };
}

function sequenceNumberOf(about: readonly Quad[]): number | undefined {
  const literal = about.find((q) => q.predicate.value === streamTerms.sequenceNumber && q.object.termType === 'Literal');
  const seq = literal === undefined ? Number.NaN : Number(literal.object.value);
  return Number.isSafeInteger(seq) && seq > 0 ? seq : undefined;
}

/**
 * The target of the document's `GreaterThanOrEqualToRelation`. The publisher writes at most
 * one; of several, the one with the smallest `tree:value` comes first in time. The relation's
 * subject is not checked against the URL fetched: behind a proxy the two differ.
 */
function nextNode(defaultGraph: readonly Quad[]): string | undefined {
  const objectOf = (subject: Quad['subject'], predicate: string) =>
    defaultGraph.find((q) => q.subject.equals(subject) && q.predicate.value === predicate)?.object;
  const candidates = defaultGraph
    .filter((q) => q.predicate.value === `${TREE}relation`)
    .map((q) => q.object as Quad['subject'])
    .filter((relation) => defaultGraph.some((q) => q.subject.equals(relation) && q.predicate.value === RDF_TYPE && q.object.value === `${TREE}GreaterThanOrEqualToRelation`))
    .map((relation) => ({ node: objectOf(relation, `${TREE}node`), valueMs: Date.parse(objectOf(relation, `${TREE}value`)?.value ?? '') }))
    .filter((relation) => relation.node?.termType === 'NamedNode')
    .sort((a, b) => (Number.isNaN(a.valueMs) ? 1 : Number.isNaN(b.valueMs) ? -1 : a.valueMs - b.valueMs));
  return candidates[0]?.node?.value;
}
