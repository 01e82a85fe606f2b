import { rdfMediaTypes } from '../model/rdf-formats.js';

/** The RDF formats the publisher serves, by the name used in `?format=` and in ETags. */
export const formats = Object.freeze({
  turtle: { mediaType: rdfMediaTypes.turtle, n3Format: 'Turtle', graphs: false, extension: 'ttl' },
  trig: { mediaType: rdfMediaTypes.trig, n3Format: 'TriG', graphs: true, extension: 'trig' },
  ntriples: { mediaType: rdfMediaTypes.ntriples, n3Format: 'N-Triples', graphs: false, extension: 'nt' },
  nquads: { mediaType: rdfMediaTypes.nquads, n3Format: 'N-Quads', graphs: true, extension: 'nq' },
  jsonld: { mediaType: rdfMediaTypes.jsonld, n3Format: undefined, graphs: true, extension: 'jsonld' },
} as const);

export type FormatName = keyof typeof formats;

export const formatNames = Object.keys(formats) as FormatName[];

export const isFormatName = (value: unknown): value is FormatName =>
  typeof value === 'string' && Object.hasOwn(formats, value);

/** Content-Type header value for a format (every textual RDF format is UTF-8). */
export const contentType = (format: FormatName) =>
  format === 'jsonld' ? formats.jsonld.mediaType : `${formats[format].mediaType}; charset=utf-8`;
