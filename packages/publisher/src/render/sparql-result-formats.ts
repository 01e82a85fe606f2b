import { mediaTypes } from '@rdf-stream/protocol';
import { ns } from '../model/vocabulary.js';
import { parseAccept, preferredMediaType } from './headers/media-range.js';

/** What a SPARQL query returns: rows (SELECT), a boolean (ASK) or triples (CONSTRUCT, DESCRIBE). */
export type SparqlResultKind = 'bindings' | 'boolean' | 'quads';
export const sparqlResultKinds: readonly SparqlResultKind[] = ['bindings', 'boolean', 'quads'];

const SPARQL_JSON = 'application/sparql-results+json';
const SPARQL_XML = 'application/sparql-results+xml';

/**
 * The media types the endpoint writes each kind of result in, the default first: those Comunica
 * has a serialiser for (`resultToString`). CSV and TSV hold rows only (SPARQL 1.1 Query Results
 * CSV and TSV Formats has no boolean).
 */
export const sparqlResultMediaTypes: Readonly<Record<SparqlResultKind, readonly string[]>> = Object.freeze({
  bindings: [SPARQL_JSON, SPARQL_XML, 'text/csv', 'text/tab-separated-values'],
  boolean: [SPARQL_JSON, SPARQL_XML],
  quads: [mediaTypes.turtle, mediaTypes.ntriples, mediaTypes.nquads, mediaTypes.trig, mediaTypes.jsonld],
});

/** The W3C format IRI (http://www.w3.org/ns/formats/) of each result media type, for `sd:resultFormat`. */
export const sparqlResultFormatIris: Readonly<Record<string, string>> = Object.freeze({
  [SPARQL_JSON]: `${ns.formats}SPARQL_Results_JSON`,
  [SPARQL_XML]: `${ns.formats}SPARQL_Results_XML`,
  'text/csv': `${ns.formats}SPARQL_Results_CSV`,
  'text/tab-separated-values': `${ns.formats}SPARQL_Results_TSV`,
  [mediaTypes.turtle]: `${ns.formats}Turtle`,
  [mediaTypes.ntriples]: `${ns.formats}N-Triples`,
  [mediaTypes.nquads]: `${ns.formats}N-Quads`,
  [mediaTypes.trig]: `${ns.formats}TriG`,
  [mediaTypes.jsonld]: `${ns.formats}JSON-LD`,
});

/** The media type to write each kind of result in, or undefined where `Accept` takes none. */
export type ResultMediaTypes = Readonly<Record<SparqlResultKind, string | undefined>>;

/**
 * Negotiates the result's media type for each kind at once (RFC 9110 §12.5.1): the kind is
 * known only once the query is parsed, in the query thread. A missing or empty `Accept` takes
 * each kind's default.
 */
export function negotiateResultMediaTypes(accept: string | undefined): ResultMediaTypes {
  const ranges = accept === undefined || accept.trim() === '' ? undefined : parseAccept(accept);
  const pick = (offered: readonly string[]) => (ranges === undefined ? offered[0] : preferredMediaType(ranges, offered));
  return {
    bindings: pick(sparqlResultMediaTypes.bindings),
    boolean: pick(sparqlResultMediaTypes.boolean),
    quads: pick(sparqlResultMediaTypes.quads),
  };
}

/** The Content-Type of a result in `mediaType`: every one is UTF-8 text. */
export const sparqlResultContentType = (mediaType: string) => (mediaType === mediaTypes.jsonld ? mediaType : `${mediaType}; charset=utf-8`);
