import type { Quad } from '@rdfjs/types';
import { createHash } from 'node:crypto';
import { type FormatName, formatNames } from '@rdf-stream/protocol';
import type { JsonLdWriter } from './jsonld-writer.js';
import { writeRdf } from './render-element.js';

/** A document that does not change while the publisher runs (descriptor, catalogue, ontologies), rendered once. */
export interface StaticDocument {
  readonly bodies: Readonly<Record<FormatName, Buffer>>;
  readonly etags: Readonly<Record<FormatName, string>>;
}

/**
 * Renders `quads` in every format. `verbatim` gives the body of some formats as written by hand
 * (an ontology's Turtle file, comments and layout kept) instead of the writer's.
 */
export function renderStaticDocument(
  quads: readonly Quad[],
  jsonLd: JsonLdWriter,
  prefixes: Readonly<Record<string, string>>,
  verbatim: Partial<Readonly<Record<FormatName, Buffer>>> = {},
): StaticDocument {
  const bodies = {} as Record<FormatName, Buffer>;
  const etags = {} as Record<FormatName, string>;
  for (const format of formatNames) {
    const body = verbatim[format] ?? Buffer.from(format === 'jsonld' ? jsonLd.write(quads) : writeRdf(quads, format, prefixes));
    bodies[format] = body;
    etags[format] = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  }
  return { bodies: Object.freeze(bodies), etags: Object.freeze(etags) };
}
