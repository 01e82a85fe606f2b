/** The RDF formats the publisher serves, by the name used in `?format=` and in ETags. */
export const formats = Object.freeze({
  turtle: { mediaType: 'text/turtle', n3Format: 'Turtle', graphs: false, extension: 'ttl' },
  trig: { mediaType: 'application/trig', n3Format: 'TriG', graphs: true, extension: 'trig' },
  ntriples: { mediaType: 'application/n-triples', n3Format: 'N-Triples', graphs: false, extension: 'nt' },
  nquads: { mediaType: 'application/n-quads', n3Format: 'N-Quads', graphs: true, extension: 'nq' },
  jsonld: { mediaType: 'application/ld+json', n3Format: undefined, graphs: true, extension: 'jsonld' },
} as const);

export type FormatName = keyof typeof formats;

export const formatNames = Object.keys(formats) as FormatName[];

export const isFormatName = (value: unknown): value is FormatName =>
  typeof value === 'string' && Object.hasOwn(formats, value);

/** Content-Type header value for a format (every textual RDF format is UTF-8). */
export const contentType = (format: FormatName) =>
  format === 'jsonld' ? formats.jsonld.mediaType : `${formats[format].mediaType}; charset=utf-8`;
