import type { Quad, Term } from '@rdfjs/types';
import jsonld from 'jsonld';
import type { RemoteDocument } from 'jsonld/jsonld-spec.js';
import { parse as locateJsonError, type ParseError, printParseErrorCode } from 'jsonc-parser';
import { Parser } from 'n3';
import { type InputFormat, type N3Format, rdfMediaTypes } from './rdf-formats.js';

export interface InputLimits {
  readonly maxTriples: number;
  readonly maxLiteralChars: number;
  readonly maxIriChars: number;
}

/**
 * Why an input was refused. `syntax` carries the line (1-based) when the parser knows it;
 * `limit` names the limit exceeded.
 */
export class RdfInputError extends Error {
  override readonly name = 'RdfInputError';
  constructor(
    readonly reason: 'syntax' | 'remote-context' | 'forbidden-key' | 'limit' | 'empty',
    message: string,
    readonly line?: number,
  ) {
    super(message);
  }
}

export interface ParseOptions {
  readonly format: InputFormat;
  /** Base IRI for relative IRIs. */
  readonly baseIri: string;
  readonly limits: InputLimits;
  /** The only `@context` URLs a JSON-LD input may name, and their documents (never fetched). */
  readonly contexts: ReadonlyMap<string, unknown>;
}

/**
 * Parses an RDF document received from outside, refusing anything that could make the publisher
 * fetch a resource (remote JSON-LD contexts, `@import`), prototype keys, and documents above the
 * count limits. Throws `RdfInputError`; never returns partial data.
 */
export async function parseRdfInput(text: string, options: ParseOptions): Promise<Quad[]> {
  const quads = options.format === 'jsonld' ? await parseJsonLd(text, options) : parseN3(text, options.format, options.baseIri);
  if (quads.length === 0) throw new RdfInputError('empty', 'The document holds no triples');
  checkLimits(quads, options.limits);
  return quads;
}

/** Parses Turtle, TriG, N-Triples or N-Quads; a syntax error is an `RdfInputError` with its line. */
export function parseN3(text: string, format: N3Format, baseIri?: string): Quad[] {
  const parser = new Parser({ format: rdfMediaTypes[format], ...(baseIri === undefined ? {} : { baseIRI: baseIri }) });
  try {
    return parser.parse(text);
  } catch (error) {
    const context = (error as { context?: { line?: number } }).context;
    throw new RdfInputError('syntax', (error as Error).message, context?.line);
  }
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

async function parseJsonLd(text: string, options: ParseOptions): Promise<Quad[]> {
  let document: unknown;
  try {
    document = JSON.parse(text, (key, value: unknown) => {
      if (key === '__proto__') throw new RdfInputError('forbidden-key', 'The key "__proto__" is not allowed');
      return value;
    });
  } catch (error) {
    if (error instanceof RdfInputError) throw error;
    // Node 20's JSON.parse does not say where; a tolerant parser locates the first error.
    const errors: ParseError[] = [];
    locateJsonError(text, errors, { disallowComments: true, allowTrailingComma: false });
    const first = errors[0];
    const line = first === undefined ? undefined : lineAt(text, first.offset);
    const what = first === undefined ? (error as Error).message : printParseErrorCode(first.error);
    throw new RdfInputError('syntax', `Invalid JSON: ${what}${line === undefined ? '' : ` on line ${line}`}`, line);
  }
  checkContexts(document, options.contexts);
  const documentLoader = async (url: string): Promise<RemoteDocument> => {
    // Unreachable after checkContexts; kept so that jsonld.js can never go online.
    if (!options.contexts.has(url)) throw new RdfInputError('remote-context', `Remote JSON-LD context refused: ${url}`);
    return { contextUrl: undefined, documentUrl: url, document: options.contexts.get(url) as RemoteDocument['document'] };
  };
  let nquads: string;
  try {
    // `safe`: refuse what expansion would silently drop (undefined terms, bad IRIs); not in @types/jsonld yet.
    const toRdfOptions = { format: 'application/n-quads', base: options.baseIri, documentLoader, safe: true };
    nquads = (await jsonld.toRDF(document as jsonld.JsonLdDocument, toRdfOptions as jsonld.Options.ToRdf)) as unknown as string;
  } catch (error) {
    if (error instanceof RdfInputError) throw error;
    const details = (error as { details?: { event?: { message?: string } } }).details;
    throw new RdfInputError('syntax', `Invalid JSON-LD: ${details?.event?.message ?? (error as Error).message}`);
  }
  return new Parser({ format: 'application/n-quads' }).parse(nquads);
}

/**
 * A JSON-LD document may only name the bundled contexts: any other `@context` URL, and any
 * `@import`, is refused before jsonld.js sees the document, so no connection is ever attempted.
 */
function checkContexts(value: unknown, contexts: ReadonlyMap<string, unknown>): void {
  if (Array.isArray(value)) {
    for (const item of value) checkContexts(item, contexts);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [key, member] of Object.entries(value)) {
    if (key === '@import') throw new RdfInputError('remote-context', '"@import" is not allowed: contexts are never fetched');
    if (key === '@context') {
      for (const entry of Array.isArray(member) ? member : [member]) {
        if (typeof entry === 'string' && !contexts.has(entry)) {
          throw new RdfInputError(
            'remote-context',
            `Remote JSON-LD context refused: ${entry} (contexts are never fetched; inline it or use ${[...contexts.keys()].join(', ')})`,
          );
        }
      }
    }
    checkContexts(member, contexts);
  }
}

function checkLimits(quads: readonly Quad[], limits: InputLimits): void {
  if (quads.length > limits.maxTriples) {
    throw new RdfInputError('limit', `The element has ${quads.length} triples; the limit is ${limits.maxTriples}`);
  }
  const check = (term: Term) => {
    if (term.termType === 'Literal' && term.value.length > limits.maxLiteralChars) {
      throw new RdfInputError('limit', `A literal has ${term.value.length} characters; the limit is ${limits.maxLiteralChars}`);
    }
    if (term.termType === 'NamedNode' && term.value.length > limits.maxIriChars) {
      throw new RdfInputError('limit', `An IRI has ${term.value.length} characters; the limit is ${limits.maxIriChars}`);
    }
    if (term.termType === 'Literal' && term.datatype.value.length > limits.maxIriChars) {
      throw new RdfInputError('limit', `A datatype IRI has ${term.datatype.value.length} characters; the limit is ${limits.maxIriChars}`);
    }
  };
  for (const quad of quads) {
    check(quad.subject);
    check(quad.predicate);
    check(quad.object);
    check(quad.graph);
  }
}
