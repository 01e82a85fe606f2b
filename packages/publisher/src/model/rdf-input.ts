import type { Quad, Term } from '@rdfjs/types';
import type jsonld from 'jsonld';
import type { RemoteDocument } from 'jsonld/jsonld-spec.js';
import { parse as locateJsonError, type ParseError, printParseErrorCode } from 'jsonc-parser';
import { Parser } from 'n3';
import { mediaTypes } from '@rdf-stream/protocol';
import { echoed } from '../errors.js';
import { jsonNestingBeyond } from './json-nesting.js';
import { loneSurrogateInJson } from './lone-surrogate.js';
import type { InputFormat, N3Format } from './input-formats.js';

export interface InputLimits {
  readonly maxTriples: number;
  readonly maxLiteralChars: number;
  readonly maxIriChars: number;
  /** Deepest nesting of arrays and objects in a JSON-LD input (levels). */
  readonly maxJsonDepth: number;
}

/**
 * Why an input was refused. `syntax` carries the line (1-based) when the parser knows it;
 * `limit` names the limit exceeded.
 */
export class RdfInputError extends Error {
  override readonly name = 'RdfInputError';
  constructor(
    readonly reason: 'syntax' | 'remote-context' | 'forbidden-key' | 'limit' | 'too-deep' | 'empty',
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
 * fetch a resource (remote JSON-LD contexts, `@import`), prototype keys, lone surrogates (in
 * every format, as Turtle's grammar refuses them), and documents above the limits. Throws
 * `RdfInputError`; never returns partial data. Trusts `text` to be decoded from UTF-8, hence to
 * hold no lone surrogate but in escapes.
 */
export async function parseRdfInput(text: string, options: ParseOptions): Promise<Quad[]> {
  const quads = options.format === 'jsonld' ? await parseJsonLd(text, options) : parseN3(text, options.format, options.baseIri);
  if (quads.length === 0) throw new RdfInputError('empty', 'The document holds no triples');
  checkLimits(quads, options.limits);
  return quads;
}

/** Parses Turtle, TriG, N-Triples or N-Quads; a syntax error is an `RdfInputError` with its line. */
export function parseN3(text: string, format: N3Format, baseIri?: string): Quad[] {
  const parser = new Parser({ format: mediaTypes[format], ...(baseIri === undefined ? {} : { baseIRI: baseIri }) });
  try {
    return parser.parse(text);
  } catch (error) {
    const context = (error as { context?: { line?: number } }).context;
    // An n3 syntax error has a context; anything else is n3 failing on its own (a TypeError
    // on 'PREFIX :<:>'), whose message describes n3's internals, not the document.
    if (context === undefined) throw new RdfInputError('syntax', `The ${format} document cannot be parsed`);
    // n3 quotes the offending input ('Unexpected "…" on line 3.'), up to the next space.
    const message = (error as Error).message.replace(/"(.*)"/s, (_, quoted: string) => `"${echoed(quoted)}"`);
    throw new RdfInputError('syntax', message, context.line);
  }
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

async function parseJsonLd(text: string, options: ParseOptions): Promise<Quad[]> {
  // Before any reader that recurses (the reviver, the error locator, jsonld.js) sees the text.
  const tooDeep = jsonNestingBeyond(text, options.limits.maxJsonDepth);
  if (tooDeep !== undefined) {
    const line = lineAt(text, tooDeep);
    throw new RdfInputError('too-deep', `The JSON is nested deeper than ${options.limits.maxJsonDepth} levels on line ${line}`, line);
  }
  let document: unknown;
  try {
    document = JSON.parse(text, (key, value: unknown) => {
      if (key === '__proto__') throw new RdfInputError('forbidden-key', 'The key "__proto__" is not allowed');
      return value;
    });
  } catch (error) {
    if (error instanceof RdfInputError) throw error;
    const first = firstJsonError(text);
    const line = first === undefined ? undefined : lineAt(text, first.offset);
    const what = first === undefined ? 'not a JSON document' : printParseErrorCode(first.error);
    throw new RdfInputError('syntax', `Invalid JSON: ${what}${line === undefined ? '' : ` on line ${line}`}`, line);
  }
  const lone = loneSurrogateInJson(text);
  if (lone !== undefined) {
    const line = lineAt(text, lone);
    const what = text.charCodeAt(lone) === 0x5c ? text.slice(lone, lone + 6) : 'a character';
    throw new RdfInputError('syntax', `Invalid JSON-LD: ${what} on line ${line} is half of a UTF-16 surrogate pair, not a character`, line);
  }
  checkContexts(document, options.contexts);
  const documentLoader = async (url: string): Promise<RemoteDocument> => {
    // Unreachable after checkContexts; kept so that jsonld.js can never go online.
    if (!options.contexts.has(url)) throw new RdfInputError('remote-context', `Remote JSON-LD context refused: ${echoed(url)}`);
    return { contextUrl: undefined, documentUrl: url, document: options.contexts.get(url) as RemoteDocument['document'] };
  };
  let nquads: string;
  try {
    // `safe`: refuse what expansion would silently drop (undefined terms, bad IRIs); not in @types/jsonld yet.
    const toRdfOptions = { format: 'application/n-quads', base: options.baseIri, documentLoader, safe: true };
    const jsonLd = await loadJsonLd();
    nquads = (await jsonLd.toRDF(document as jsonld.JsonLdDocument, toRdfOptions as jsonld.Options.ToRdf)) as unknown as string;
  } catch (error) {
    if (error instanceof RdfInputError) throw error;
    throw new RdfInputError('syntax', `Invalid JSON-LD: ${jsonLdErrorMessage(error)}`);
  }
  try {
    return new Parser({ format: 'application/n-quads' }).parse(nquads);
  } catch {
    // jsonld.js takes any string with a scheme for an absolute IRI; n3, like Turtle's grammar,
    // refuses those holding a space, <, >, ", {, }, |, \, ^, ` or a control character.
    throw new RdfInputError('syntax', 'Invalid JSON-LD: an IRI holds a character no IRI may hold (a space, <, >, ", {, }, |, \\, ^, ` or a control character)');
  }
}

/**
 * Node 20's JSON.parse does not say where; a tolerant parser locates the first error. It recurses
 * no deeper than `jsonNestingBeyond` counted; should it fail anyway, the error has no place.
 */
function firstJsonError(text: string): ParseError | undefined {
  const errors: ParseError[] = [];
  try {
    locateJsonError(text, errors, { disallowComments: true, allowTrailingComma: false });
  } catch {
    return undefined;
  }
  return errors[0];
}

/**
 * What jsonld.js says is wrong with a document (its `JsonLdError`s, named `jsonld.*`). Anything
 * else it throws is a JavaScript error of its own (a TypeError on an input it did not expect),
 * whose message describes jsonld.js's internals, not the document: it is not echoed.
 */
function jsonLdErrorMessage(error: unknown): string {
  const { name, message, details } = error as { name?: unknown; message?: unknown; details?: { event?: { message?: unknown } } };
  const eventMessage = details?.event?.message;
  if (typeof eventMessage === 'string') return eventMessage;
  if (typeof name === 'string' && name.startsWith('jsonld.') && typeof message === 'string') return message;
  return 'the document cannot be converted to RDF';
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
            `Remote JSON-LD context refused: ${echoed(entry)} (contexts are never fetched; inline it or use ${[...contexts.keys()].join(', ')})`,
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

let jsonLdModule: Promise<typeof jsonld> | undefined;

/**
 * jsonld.js, loaded with the first JSON-LD body rather than with the publisher: it (and the
 * HTTP client and canonicaliser it brings) is a good part of the start-up time, and most
 * publishers never ingest JSON-LD.
 */
function loadJsonLd(): Promise<typeof jsonld> {
  jsonLdModule ??= import('jsonld').then((module) => module.default);
  return jsonLdModule;
}
