import { type FormatName, mediaTypes } from '@rdf-stream/protocol';

/**
 * How the publisher writes each format of the protocol (`@rdf-stream/protocol` names them, with
 * their media types): n3's writer format, whether it keeps named graphs, a file extension.
 */
export const formats = Object.freeze({
  turtle: { mediaType: mediaTypes.turtle, n3Format: 'Turtle', graphs: false, extension: 'ttl' },
  trig: { mediaType: mediaTypes.trig, n3Format: 'TriG', graphs: true, extension: 'trig' },
  ntriples: { mediaType: mediaTypes.ntriples, n3Format: 'N-Triples', graphs: false, extension: 'nt' },
  nquads: { mediaType: mediaTypes.nquads, n3Format: 'N-Quads', graphs: true, extension: 'nq' },
  jsonld: { mediaType: mediaTypes.jsonld, n3Format: undefined, graphs: true, extension: 'jsonld' },
} as const satisfies Record<FormatName, unknown>);

/** Content-Type header value for a format (every textual RDF format is UTF-8). */
export const contentType = (format: FormatName) =>
  format === 'jsonld' ? formats.jsonld.mediaType : `${formats[format].mediaType}; charset=utf-8`;
