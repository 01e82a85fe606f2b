import type { Quad } from '@rdfjs/types';
import { DataFactory, Parser, Writer } from 'n3';

/**
 * The change between two versions of a set of triples, written as RDF Patch
 * (https://afs.github.io/rdf-delta/rdf-patch.html), the format of Apache Jena and RDF Delta.
 * No npm package writes RDF Patch or diffs RDF, so this is the small part we need, on n3's terms:
 * every triple is keyed and written by n3's own N-Triples writer (`quadToString`), so the
 * rows of a patch are exactly the lines a client parses from `/latest` in N-Triples.
 */

/** The triples of one version, keyed by their N-Triples line (without the final newline). */
export type TripleSet = ReadonlySet<string>;

const writer = new Writer({ format: 'N-Triples' });

/** `<s> <p> <o> .` for a triple (its graph is ignored: the patch is about the default graph). */
export const tripleLine = (q: Quad): string => writer.quadToString(q.subject, q.predicate, q.object).trimEnd();

/**
 * The triples of an N-Triples document as written by n3 (an element's N-Triples frame). Blank
 * node labels are kept as the document writes them (`blankNodePrefix: ''`): RDF Patch addresses a
 * blank node by its label, so a patch and the `/latest` it applies to must agree on it.
 */
export function tripleSetOf(nTriples: string): TripleSet {
  const quads = new Parser({ format: 'N-Triples', blankNodePrefix: '' }).parse(nTriples);
  return new Set(quads.map((q) => tripleLine(DataFactory.quad(q.subject, q.predicate, q.object))));
}

export interface TripleDiff {
  /** In `before`, not in `after`, in `before`'s order. */
  readonly deleted: readonly string[];
  /** In `after`, not in `before`, in `after`'s order. */
  readonly added: readonly string[];
}

/** Set difference both ways: what left and what entered. */
export function diffTriples(before: TripleSet, after: TripleSet): TripleDiff {
  return {
    deleted: [...before].filter((line) => !after.has(line)),
    added: [...after].filter((line) => !before.has(line)),
  };
}

export interface RdfPatch extends TripleDiff {
  /** `H id <…>`: the IRI of the version this patch leads to (the element's graph IRI). */
  readonly id: string;
  /** `H prev <…>`: the version it applies to; absent for a patch from nothing (the first element). */
  readonly prev?: string;
}

/**
 * The patch as text: headers, then one transaction (`TX` … `TC`) holding the deletions (`D`)
 * before the additions (`A`). Each row ends with ` .`, as in the specification's examples.
 */
export function writeRdfPatch(patch: RdfPatch): string {
  const lines = [`H id <${patch.id}> .`];
  if (patch.prev !== undefined) lines.push(`H prev <${patch.prev}> .`);
  lines.push('TX .');
  for (const line of patch.deleted) lines.push(`D ${line}`);
  for (const line of patch.added) lines.push(`A ${line}`);
  lines.push('TC .');
  return `${lines.join('\n')}\n`;
}
