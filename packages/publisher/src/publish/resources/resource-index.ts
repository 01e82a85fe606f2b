import type { Quad } from '@rdfjs/types';
import { Parser } from 'n3';
import { streamResources } from '@rdf-stream/protocol';
import { describeMentionedResources } from '../../model/resource-description.js';

/** The description of one resource a stream mints, as of the newest element that mentions it. */
export interface ResourceDescription {
  readonly iri: string;
  /** The element the description comes from: its sequence number and generation time. */
  readonly seq: number;
  readonly generatedAt: Date;
  /** Built once per element; never modified. */
  readonly quads: readonly Quad[];
}

/** An element as `/latest` serves it: what the index reads. */
export interface IndexedElement {
  readonly seq: number;
  readonly generatedAt: Date;
  readonly graph: string;
  /** The element's N-Triples document (its triples in one graph, with its timestamp). */
  readonly ntriples: Buffer;
}

/**
 * The sensors and features of interest a stream has minted (`{stream}/sensors/{local}`,
 * `{stream}/facilities/{local}`), each with its description as of the newest element that
 * mentions it. Each element `/latest` serves is read once, when it is served; a request only
 * looks a description up. At most `maxResources` resources are kept: the one least recently
 * mentioned is forgotten first (its IRI answers 404 until an element mentions it again).
 */
export class ResourceIndex {
  readonly #streamIri: string;
  readonly #maxResources: number;
  /** The IRI prefixes of the resources a stream mints, as bytes: an element holding neither is not parsed. */
  readonly #mintedPrefixes: readonly Buffer[];
  /** In the order resources were last mentioned, oldest first. */
  readonly #descriptions = new Map<string, ResourceDescription>();
  #indexedSeq = 0;

  constructor(streamIri: string, maxResources: number) {
    this.#streamIri = streamIri;
    this.#maxResources = maxResources;
    const minted = streamResources(streamIri);
    this.#mintedPrefixes = [minted.sensor(''), minted.featureOfInterest('')].map((prefix) => Buffer.from(`<${prefix}`));
  }

  /** Resources described now, at most `maxResources`. */
  get size(): number {
    return this.#descriptions.size;
  }

  /** Reads the resources `element` mentions (an element older than one read already is ignored). */
  index(element: IndexedElement): void {
    if (element.seq <= this.#indexedSeq || this.#maxResources === 0) return;
    this.#indexedSeq = element.seq;
    // Most streams that mint nothing (ingest, web APIs naming their own IRIs) cost a byte search, not a parse.
    if (!this.#mintedPrefixes.some((prefix) => element.ntriples.includes(prefix))) return;
    const triples = new Parser({ format: 'N-Triples' }).parse(element.ntriples.toString('utf8'));
    const mentioned = describeMentionedResources(this.#streamIri, { graph: element.graph, generatedAt: element.generatedAt, triples });
    for (const [iri, quads] of mentioned) {
      this.#descriptions.delete(iri);
      this.#descriptions.set(iri, Object.freeze({ iri, seq: element.seq, generatedAt: element.generatedAt, quads: Object.freeze(quads) }));
    }
    for (const iri of this.#descriptions.keys()) {
      if (this.#descriptions.size <= this.#maxResources) break;
      this.#descriptions.delete(iri);
    }
  }

  /** The description of `iri`, or undefined if no element read since start (within the limit) mentions it. */
  get(iri: string): ResourceDescription | undefined {
    return this.#descriptions.get(iri);
  }
}
