import type { Quad } from '@rdfjs/types';
import type { FormatName } from '@rdf-stream/protocol';
import { ns, turtlePrefixes } from '../model/vocabulary.js';
import type { JsonLdWriter } from './jsonld-writer.js';
import { perElement } from './per-element.js';
import { writeRdf } from './render-element.js';

/** Prefixes of a resource description in Turtle and TriG. */
const resourcePrefixes = Object.freeze({ ...turtlePrefixes, 'rdf-stream': ns.rdfStream });

/**
 * The document of a resource description in `format`, written on first use and kept with the
 * description object (which the index replaces when a newer element mentions the resource): a
 * request never serialises, whatever the number of requests per element.
 */
export function resourceDocuments(jsonLd: JsonLdWriter): (description: { readonly quads: readonly Quad[] }, format: FormatName) => Buffer {
  return perElement((description: { readonly quads: readonly Quad[] }, format: FormatName) =>
    Buffer.from(format === 'jsonld' ? jsonLd.write(description.quads) : writeRdf(description.quads, format, resourcePrefixes)),
  );
}
