import type { QueryResult, TransportName } from '@rdf-stream/client';

/**
 * What the page and its query worker say to each other. Everything in them survives
 * `postMessage` (structured clone): plain values only. RDF/JS terms do not (an N3 term's `value`
 * is a getter, lost in the clone), so a result's terms travel as the strings the table shows.
 */

/** Page → worker: run `query` (replacing any run), or stop the current one. */
export type QueryCommand =
  | { readonly type: 'start'; readonly run: number; readonly query: string; readonly transport: TransportName }
  | { readonly type: 'stop'; readonly run: number };

/** One result of the continuous query, as the page shows it. */
export interface QueryResultView {
  readonly windows: ReadonlyArray<{ readonly start: number; readonly end: number; readonly elements: number }>;
  readonly resultType: 'bindings' | 'quads' | 'boolean';
  /** SELECT's variables, in order (those the engine projects, else those the rows bind). */
  readonly variables: readonly string[];
  /** Each row's terms by variable: the term's value (IRI, literal's lexical form, blank node label). */
  readonly rows: ReadonlyArray<Readonly<Record<string, string>>>;
  readonly quadCount: number;
  readonly boolean: boolean | undefined;
  readonly evaluationMs: number;
}

/** Worker → page, each about the run it names. */
export type QueryReport =
  /** The query is parsed and its engine loaded, before the first result; `engine` says where it runs. */
  | { readonly type: 'running'; readonly run: number; readonly engine: 'worker' }
  | { readonly type: 'result'; readonly run: number; readonly result: QueryResultView }
  | { readonly type: 'failed'; readonly run: number; readonly message: string }
  | { readonly type: 'ended'; readonly run: number };

/** A result as plain values: see `QueryResultView`. */
export function resultView(result: QueryResult): QueryResultView {
  const rows = (result.bindings ?? []).map((row) => Object.fromEntries(Object.entries(row).map(([name, term]) => [name, term.value])));
  return {
    windows: result.windows.map((window) => ({ start: window.start, end: window.end, elements: window.elements })),
    resultType: result.resultType,
    variables: result.variables ?? [...new Set(rows.flatMap((row) => Object.keys(row)))],
    rows,
    quadCount: result.quads?.length ?? 0,
    boolean: result.boolean,
    evaluationMs: result.evaluationMs,
  };
}
