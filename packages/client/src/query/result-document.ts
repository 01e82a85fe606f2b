import { Readable } from 'node:stream';
import type { Term, Variable } from '@rdfjs/types';
import { DataFactory } from 'n3';
import type { QueryResult, Row } from './continuous-query.js';
import { loadQueryEngine, type SparqlEngine } from './load-query-engine.js';

/** What `rdf-stream query --results` writes, and the media type Comunica's serialiser has for it. */
export const resultFormats = Object.freeze({
  json: 'application/sparql-results+json',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  xml: 'application/sparql-results+xml',
  table: 'table',
});
export type ResultFormat = keyof typeof resultFormats;

/** The part of Comunica's `QueryEngine` that serialises a result. */
interface SerializingEngine {
  resultToString(result: unknown, mediaType: string): Promise<{ readonly data: AsyncIterable<unknown> }>;
}

/** A row as Comunica's serialisers read it (the part of its `Bindings` they use). */
const bindingsOf = (row: Row) => ({
  type: 'bindings',
  get: (variable: Variable | string) => row[typeof variable === 'string' ? variable : variable.value],
  has: (variable: Variable | string) => (typeof variable === 'string' ? variable : variable.value) in row,
  size: Object.keys(row).length,
  *[Symbol.iterator](): Iterator<[Variable, Term]> {
    for (const [name, term] of Object.entries(row)) yield [DataFactory.variable(name), term];
  },
});

/**
 * Writes continuous query results as SPARQL results documents with Comunica's own serialisers
 * (`resultToString`), one document per evaluation. The rows are those the stream operator kept,
 * handed back to Comunica as a stream of bindings. Node only (the rows travel in a Node stream).
 */
export class ResultDocuments {
  readonly #engine: Promise<SparqlEngine>;

  constructor(readonly format: ResultFormat) {
    this.#engine = loadQueryEngine();
  }

  /**
   * One result as one document. SELECT results in every format; ASK in `json` only (Comunica has
   * no other serialiser for booleans); CONSTRUCT has none: both reject.
   */
  async write(result: QueryResult): Promise<string> {
    const engine = (await this.#engine) as SparqlEngine & Partial<SerializingEngine>;
    if (engine.resultToString === undefined) throw new Error('the query engine cannot serialise results');
    let serializable: unknown;
    if (result.resultType === 'boolean') {
      if (this.format !== 'json') throw new Error(`an ASK result is written as json only, not ${this.format}`);
      serializable = { resultType: 'boolean', execute: async () => result.boolean ?? false };
    } else if (result.resultType === 'bindings') {
      const rows = result.bindings ?? [];
      const names = result.variables ?? [...new Set(rows.flatMap((row) => Object.keys(row)))];
      serializable = {
        resultType: 'bindings',
        execute: async () => Readable.from(rows.map(bindingsOf), { objectMode: true }),
        metadata: async () => ({ variables: names.map((name) => DataFactory.variable(name)) }),
      };
    } else {
      throw new Error('a CONSTRUCT result has no SPARQL results document: leave out --results');
    }
    let text = '';
    for await (const chunk of (await engine.resultToString(serializable, resultFormats[this.format])).data) text += String(chunk);
    return text;
  }
}
