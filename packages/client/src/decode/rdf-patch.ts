import type { DatasetCore, Quad } from '@rdfjs/types';
import { Parser } from 'n3';

/**
 * RDF Patch (https://afs.github.io/rdf-delta/rdf-patch.html), the format of Apache Jena and RDF
 * Delta, as a publisher's `/patches` events carry it. No npm package reads RDF Patch, so this is
 * the part a client needs: headers (`H id`, `H prev`), transactions (`TX`, `TC`; `TA` discards
 * the rows since `TX`), data rows (`A`, `D`) whose terms are written as in N-Triples / N-Quads
 * (n3 parses them), and prefix rows (`PA`, `PD`), which change no triple and are skipped.
 * Prefixed names and the repeat marker of compact patches are not read.
 */
export interface RdfPatch {
  /** `H id`: the version the patch leads to (the element's graph IRI). */
  readonly id: string | undefined;
  /** `H prev`: the version it applies to; undefined for a patch from nothing. */
  readonly prev: string | undefined;
  /** Quads removed (`D`), in the patch's order. */
  readonly deleted: Quad[];
  /** Quads added (`A`), in the patch's order. */
  readonly added: Quad[];
}

/** A patch that cannot be read: the subscription reports it and reads the snapshot again. */
export class RdfPatchSyntaxError extends Error {
  override readonly name = 'RdfPatchSyntaxError';
}

const header = /^H\s+(\S+)\s+<([^>]*)>\s*\.?\s*$/;
const keyword = /^(TX|TC|TA|PA|PD)\b/;

export function parseRdfPatch(text: string): RdfPatch {
  const headers = new Map<string, string>();
  let rows: { readonly op: 'A' | 'D'; readonly statement: string }[] = [];
  let committed: { readonly op: 'A' | 'D'; readonly statement: string }[] = [];
  let open = false;
  text.split(/\r\n|\n|\r/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const headerMatch = header.exec(line);
    if (line.startsWith('H ')) {
      if (headerMatch === null) throw new RdfPatchSyntaxError(`line ${index + 1}: a header must be H name <IRI> .`);
      headers.set(headerMatch[1] as string, headerMatch[2] as string);
      return;
    }
    const word = keyword.exec(line)?.[1];
    if (word === 'TX') {
      committed = committed.concat(rows);
      open = true;
      rows = [];
    } else if (word === 'TC') {
      committed = committed.concat(rows);
      rows = [];
      open = false;
    } else if (word === 'TA') {
      rows = [];
      open = false;
    } else if (word === undefined) {
      const op = line[0];
      if ((op !== 'A' && op !== 'D') || !/\s/.test(line[1] ?? '')) throw new RdfPatchSyntaxError(`line ${index + 1}: unknown row ${JSON.stringify(line.slice(0, 20))}`);
      rows.push({ op, statement: line.slice(1).trim() });
    }
  });
  // Rows outside a transaction apply as they come (the specification allows patches without TX).
  if (!open) committed = committed.concat(rows);
  else if (rows.length > 0) throw new RdfPatchSyntaxError('the patch ends inside a transaction (TX without TC)');
  return { id: headers.get('id'), prev: headers.get('prev'), deleted: statements(committed, 'D'), added: statements(committed, 'A') };
}

/** The quads of the rows of one kind, parsed by n3 as N-Quads (blank node labels kept as written). */
function statements(rows: readonly { readonly op: 'A' | 'D'; readonly statement: string }[], op: 'A' | 'D'): Quad[] {
  const text = rows
    .filter((row) => row.op === op)
    .map((row) => row.statement)
    .join('\n');
  if (text === '') return [];
  try {
    return new Parser({ format: 'N-Quads', blankNodePrefix: '' }).parse(text);
  } catch (error) {
    throw new RdfPatchSyntaxError(`a ${op} row cannot be read: ${(error as Error).message}`);
  }
}

/** Applies a patch to a dataset (an n3 `Store`, or any RDF/JS `DatasetCore`): deletions first, then additions. */
export function applyRdfPatch(store: DatasetCore, patch: RdfPatch): void {
  for (const quad of patch.deleted) store.delete(quad);
  for (const quad of patch.added) store.add(quad);
}
