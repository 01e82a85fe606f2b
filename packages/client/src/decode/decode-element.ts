import type { Quad } from '@rdfjs/types';
import jsonld from 'jsonld';
import { Parser } from 'n3';
import { CONTEXT_PATH, elementIdOfIri, type FormatName, mediaTypes, sosaStreamContext, streamTerms } from '@rdf-stream/protocol';

/** An element decoded from one of the publisher's formats. */
export interface DecodedElement {
  readonly quads: Quad[];
  /** The element's graph name (the subject of `prov:generatedAtTime`). */
  readonly graph: string | undefined;
  /** From `prov:generatedAtTime`, on the server's clock. */
  readonly generatedAt: Date | undefined;
  /** From the graph IRI `…/elements/{epoch}-{seq}`, when it follows the publisher's convention. */
  readonly seq: number | undefined;
  /** The log's epoch, from the same IRI. */
  readonly epoch: string | undefined;
}

/** Thrown for a body that is not valid RDF in the format it claims. */
export class DecodeError extends Error {
  override readonly name = 'DecodeError';
}

/**
 * JSON-LD documents may only use the publisher's context, which is bundled: any other remote
 * document (context, `@import`) is refused, so decoding never opens a connection. Refusals are
 * recorded because jsonld.js wraps the loader's error in its own.
 */
function bundledOnlyLoader(refused: string[]) {
  return async (url: string) => {
    let path: string | undefined;
    try {
      path = new URL(url).pathname;
    } catch {
      path = undefined;
    }
    if (path === CONTEXT_PATH) return { contextUrl: undefined, documentUrl: url, document: sosaStreamContext };
    refused.push(url);
    throw new DecodeError(`refusing to load remote JSON-LD document ${url}`);
  };
}

/** Parses an element's body into RDF/JS quads and reads its timestamp and sequence number. */
export async function decodeElement(text: string, format: FormatName): Promise<DecodedElement> {
  let quads: Quad[];
  const refused: string[] = [];
  try {
    if (format === 'jsonld') {
      const nquads = (await jsonld.toRDF(JSON.parse(text) as jsonld.JsonLdDocument, {
        format: 'application/n-quads',
        documentLoader: bundledOnlyLoader(refused) as never,
      })) as unknown as string;
      quads = new Parser({ format: 'application/n-quads' }).parse(nquads);
    } else {
      quads = new Parser({ format: mediaTypes[format] }).parse(text);
    }
  } catch (error) {
    if (refused.length > 0) throw new DecodeError(`refusing to load remote JSON-LD document ${refused[0]}`);
    throw new DecodeError(`invalid ${format}: ${(error as Error).message}`);
  }
  const stamp = quads.find((q) => q.predicate.value === streamTerms.generatedAtTime && q.object.termType === 'Literal');
  const graph = stamp?.subject.value;
  const generatedAtMs = stamp === undefined ? Number.NaN : Date.parse(stamp.object.value);
  const id = graph === undefined ? undefined : elementIdOfIri(graph);
  return {
    quads,
    graph,
    generatedAt: Number.isNaN(generatedAtMs) ? undefined : new Date(generatedAtMs),
    seq: id?.seq,
    epoch: id?.epoch,
  };
}
