/**
 * The worker thread of `ThreadedSparqlEngine`: evaluates one SPARQL query at a time with
 * Comunica over an n3 Store of the query's window, off the publisher's event loop. It keeps the
 * elements it was sent parsed (until told to forget them) and the stores of the last windows
 * built, so that a query on the same elements parses and indexes nothing again.
 */
import { Readable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';
import type { Quad } from '@rdfjs/types';
import { LRUCache } from 'lru-cache';
import { DataFactory, Parser, Store } from 'n3';
import type { SparqlResultKind } from '../../render/sparql-result-formats.js';
import { sparqlSyntaxError } from './sparql-syntax-error.js';
import type { SparqlOutcome, WorkerMessage, WorkerOptions } from './sparql-worker-protocol.js';

/** The part of Comunica's QueryEngine the worker uses. */
interface Engine {
  explain(query: string, context: Record<string, unknown>, mode: 'parsed'): Promise<unknown>;
  query(query: string, context: Record<string, unknown>): Promise<QueryResult>;
  resultToString(result: unknown, mediaType: string): Promise<{ readonly data: AsyncIterable<unknown> }>;
}
interface QueryResult {
  readonly resultType: SparqlResultKind | 'void';
  execute(): Promise<unknown>;
  metadata?: () => Promise<unknown>;
}
interface Items {
  take(count: number): Items;
  toArray(): Promise<unknown[]>;
}

const SPARQL_XML = 'application/sparql-results+xml';

const port = parentPort;
if (port === null) throw new Error('sparql-worker runs as a worker thread');
const { cacheQuads } = workerData as WorkerOptions;

const elements = new Map<string, Quad[]>();
// A store larger than the whole budget is not kept.
const stores = cacheQuads > 0 ? new LRUCache<string, Store>({ maxSize: cacheQuads, sizeCalculation: (store) => Math.max(1, store.size) }) : undefined;

// Comunica loads here, in the worker, on its first query: the publisher's start-up never waits for it.
const engine: Promise<Engine> = import('@comunica/query-sparql-rdfjs').then(({ QueryEngine }) => new QueryEngine() as unknown as Engine);
engine.then(
  () => port.postMessage({ ready: true }),
  (error: unknown) => port.postMessage({ ready: false, error: (error as Error).message }),
);

port.on('message', (message: WorkerMessage) => {
  if (message.kind === 'forget') {
    for (const graph of message.graphs) elements.delete(graph);
    return;
  }
  evaluate(message).then(
    (outcome) => port.postMessage({ id: message.id, outcome }),
    (error: unknown) => port.postMessage({ id: message.id, error: (error as Error).message }),
  );
});

async function evaluate(request: Extract<WorkerMessage, { kind: 'query' }>): Promise<SparqlOutcome> {
  for (const { graph, nquads } of request.elements) {
    if (nquads !== undefined) elements.set(graph, withDefaultGraph(new Parser({ format: 'application/n-quads' }).parse(Buffer.from(nquads).toString('utf8'))));
  }
  const storeReused = stores?.has(request.windowKey) === true;
  const store = windowStore(request.windowKey, request.elements.map(({ graph }) => graph));
  const comunica = await engine;
  // A context each: Comunica marks the one it explains with.
  const context = () => ({ sources: [store], baseIRI: request.baseIri });
  try {
    // Parsed on its own first, so that only the parser's errors are syntax errors.
    await comunica.explain(request.query, context(), 'parsed');
  } catch (error) {
    return { kind: 'syntax', ...sparqlSyntaxError((error as Error).message, request.query) };
  }
  let result: QueryResult;
  try {
    result = await comunica.query(request.query, context());
  } catch (error) {
    return { kind: 'unsupported', message: unsupported(error as Error) };
  }
  // An update is refused before it runs: Comunica applies it only when executed.
  if (result.resultType === 'void') return { kind: 'update' };
  const kind = result.resultType;
  const mediaType = request.mediaTypes[kind];
  if (mediaType === undefined) return { kind: 'not-acceptable', resultKind: kind };
  return written(comunica, result as QueryResult & { readonly resultType: SparqlResultKind }, mediaType, request.maxResults, storeReused);
}

/**
 * The result in `mediaType`, by Comunica's serialisers. It is held whole before it is written:
 * at most one row or triple more than `maxResults` is read.
 */
async function written(
  comunica: Engine,
  result: QueryResult & { readonly resultType: SparqlResultKind },
  mediaType: string,
  maxResults: number,
  storeReused: boolean,
): Promise<SparqlOutcome> {
  const kind = result.resultType;
  let serializable: unknown;
  let count = 1;
  try {
    if (kind === 'boolean') {
      const value = (await result.execute()) === true;
      // Comunica 5.4's XML serialiser reads metadata that its own conversion of a boolean result drops.
      if (mediaType === SPARQL_XML) return { kind: 'result', resultKind: kind, mediaType, body: booleanXml(value), count, storeReused };
      serializable = { resultType: 'boolean', execute: async () => value };
    } else {
      const items = await ((await result.execute()) as Items).take(maxResults + 1).toArray();
      if (items.length > maxResults) return { kind: 'too-many-results', maxResults };
      count = items.length;
      serializable = { resultType: kind, execute: async () => Readable.from(items, { objectMode: true }), metadata: result.metadata };
    }
  } catch (error) {
    return { kind: 'unsupported', message: unsupported(error as Error) };
  }
  let body = '';
  for await (const chunk of (await comunica.resultToString(serializable, mediaType)).data) body += String(chunk);
  return { kind: 'result', resultKind: kind, mediaType, body, count, storeReused };
}

/** What Comunica's message means to the query's author. */
function unsupported(error: Error): string {
  // The engine has no actor that fetches anything: a SERVICE ends here.
  if (error.message.includes('dereference-link')) return 'SERVICE is not evaluated: the endpoint queries the window of the stream only, and fetches nothing';
  return error.message;
}

/** An ASK result in the SPARQL Query Results XML Format (§2.3.2), as its schema fixes it. */
function booleanXml(value: boolean): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#">\n  <head/>\n  <boolean>${value}</boolean>\n</sparql>\n`;
}

/**
 * An element's quads, and a copy of each in the default graph: the default graph is the union of
 * the window's graphs (a query without GRAPH sees every observation), while `GRAPH ?g` ranges
 * over the elements' graphs only, as SPARQL has it (Comunica's `unionDefaultGraph` would also
 * bind `?g` to the default graph).
 */
function withDefaultGraph(quads: Quad[]): Quad[] {
  const copies = quads.filter((q) => q.graph.termType !== 'DefaultGraph').map((q) => DataFactory.quad(q.subject, q.predicate, q.object));
  return [...quads, ...copies];
}

/** The store of the window's elements (in their order), built once while it stays cached. */
function windowStore(windowKey: string, graphs: readonly string[]): Store {
  const cached = stores?.get(windowKey);
  if (cached !== undefined) return cached;
  const store = new Store();
  for (const graph of graphs) {
    const quads = elements.get(graph);
    if (quads === undefined) throw new Error(`element ${graph} was neither sent nor kept`);
    store.addQuads(quads);
  }
  stores?.set(windowKey, store);
  return store;
}
