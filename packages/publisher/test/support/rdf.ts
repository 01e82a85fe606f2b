import type { Quad } from '@rdfjs/types';
import jsonld from 'jsonld';
import { DataFactory, Parser } from 'n3';
import { isomorphic } from 'rdf-isomorphic';
import { CONTEXT_PATH, type FormatName, sosaStreamContext } from '@rdf-stream/protocol';

/** Outbound fetches that a JSON-LD document tried (there must never be any). */
export const refusedContextUrls: string[] = [];

/** Serves our bundled context for its served path, refuses everything else: no remote fetch. */
export const bundledDocumentLoader = async (url: string) => {
  if (new URL(url).pathname === CONTEXT_PATH) {
    return { contextUrl: undefined, documentUrl: url, document: sosaStreamContext };
  }
  refusedContextUrls.push(url);
  throw new Error(`refusing to load remote document ${url}`);
};

const n3Formats: Record<Exclude<FormatName, 'jsonld'>, string> = {
  turtle: 'text/turtle',
  trig: 'application/trig',
  ntriples: 'application/n-triples',
  nquads: 'application/n-quads',
};

/** Parses a body the way a client would: n3 for the Turtle family, jsonld.js for JSON-LD. */
export async function parseRdf(format: FormatName, text: string): Promise<Quad[]> {
  if (format === 'jsonld') {
    const nquads = (await jsonld.toRDF(JSON.parse(text) as jsonld.JsonLdDocument, {
      format: 'application/n-quads',
      documentLoader: bundledDocumentLoader as never,
    })) as unknown as string;
    return new Parser({ format: 'application/n-quads' }).parse(nquads);
  }
  return new Parser({ format: n3Formats[format] }).parse(text);
}

/** Moves every quad to the default graph (what Turtle and N-Triples carry). */
export const flatten = (quads: readonly Quad[]): Quad[] =>
  quads.map((q) => DataFactory.quad(q.subject, q.predicate, q.object, DataFactory.defaultGraph()));

export function expectIsomorphic(actual: readonly Quad[], expected: readonly Quad[]): void {
  if (!isomorphic([...actual], [...expected])) {
    throw new Error(
      `graphs differ:\n--- actual (${actual.length})\n${actual.map(show).sort().join('\n')}\n--- expected (${expected.length})\n${expected.map(show).sort().join('\n')}`,
    );
  }
}

const show = (q: Quad) => `${q.subject.value} ${q.predicate.value} ${q.object.value} ${q.graph.value}`;
