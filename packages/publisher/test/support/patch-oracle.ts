import type { Quad } from '@rdfjs/types';
import type { Store} from 'n3';
import { Parser, Writer } from 'n3';
import canonize from 'rdf-canonize';

/**
 * The test's own reading of an RDF Patch event (not the publisher's code, nor the client's): its
 * headers, and its A and D rows parsed by n3 as N-Triples.
 */
export interface ReadPatch {
  readonly headers: ReadonlyMap<string, string>;
  readonly rows: readonly string[];
  readonly added: Quad[];
  readonly deleted: Quad[];
}

export function readPatch(text: string): ReadPatch {
  const lines = text.split('\n');
  const headers = new Map<string, string>();
  for (const line of lines) {
    const header = /^H (\w+) <([^>]+)> \.$/.exec(line);
    if (header !== null) headers.set(header[1]!, header[2]!);
  }
  const rows = (op: string) =>
    new Parser({ format: 'N-Triples', blankNodePrefix: '' }).parse(
      lines
        .filter((line) => line.startsWith(`${op} `))
        .map((line) => line.slice(2))
        .join('\n'),
    );
  return { headers, rows: lines, added: rows('A'), deleted: rows('D') };
}

export function applyPatch(store: Store, patch: ReadPatch): void {
  for (const quad of patch.deleted) {
    if (!store.has(quad)) throw new Error(`D of a triple the store does not hold: ${quad.subject.value} ${quad.predicate.value} ${quad.object.value}`);
    store.delete(quad);
  }
  store.addQuads(patch.added);
}

export const parseNTriples = (text: string): Quad[] => new Parser({ format: 'N-Triples', blankNodePrefix: '' }).parse(text);

/** The quads' RDFC-1.0 canonical N-Quads (rdf-canonize): equal strings, isomorphic datasets. */
export async function canonical(quads: readonly Quad[]): Promise<string> {
  const writer = new Writer({ format: 'N-Quads' });
  writer.addQuads([...quads]);
  const nquads = await new Promise<string>((resolve, reject) => writer.end((error, result) => (error ? reject(error) : resolve(result))));
  return (await canonize.canonize(nquads, { algorithm: 'RDFC-1.0', inputFormat: 'application/n-quads' })) as string;
}
