import type { Quad, Term } from '@rdfjs/types';
import { DataFactory, Store } from 'n3';
import { CountWindowOperator } from '../window/count-window-operator.js';
import { TimeWindowOperator, type TimeWindowOptions } from '../window/time-window-operator.js';
import type { ClosedWindow, WindowSpec, WindowStats } from '../window/window-spec.js';
import { loadQueryEngine, type QueryEngineLoader, type SparqlEngine } from './load-query-engine.js';
import { parseRspQl, type RegisteredQuery } from './rspql-parser.js';

/** What a window holds of one element. */
export interface WindowItem {
  readonly seq: number | undefined;
  /** Event time: the element's `prov:generatedAtTime` (server clock, ms). */
  readonly generatedAtMs: number;
  readonly quads: readonly Quad[];
}

export type Row = Readonly<Record<string, Term>>;

/** One evaluation of the query over closed windows. */
export interface QueryResult {
  /** The window that closed, and the content each window had at evaluation. */
  readonly trigger: string;
  readonly windows: ReadonlyArray<{ readonly name: string; readonly start: number; readonly end: number; readonly elements: number }>;
  readonly resultType: 'bindings' | 'quads' | 'boolean';
  /** SELECT rows (after the stream operator: all, inserted or deleted ones). */
  readonly bindings?: readonly Row[];
  /** SELECT's projected variables, in order, when the engine says (Comunica does). */
  readonly variables?: readonly string[];
  readonly quads?: readonly Quad[];
  readonly boolean?: boolean;
  /** From the generation of the newest element in the windows to the result (client clock corrected). */
  readonly latencyMs: number;
  readonly evaluationMs: number;
}

interface WindowState {
  readonly name: string;
  readonly stream: string;
  readonly spec: WindowSpec;
  readonly operator: TimeWindowOperator<WindowItem> | CountWindowOperator<WindowItem>;
  current: ClosedWindow<WindowItem> | undefined;
}

export interface ContinuousQueryOptions {
  /** The SPARQL engine; default: a Comunica `QueryEngine`, loaded on first use (see `loadQueryEngine`). */
  readonly engine?: SparqlEngine;
  /** How to import Comunica when no `engine` is given: see `QueryEngineLoader`. */
  readonly loadQueryEngine?: QueryEngineLoader;
  readonly window?: TimeWindowOptions;
}

/**
 * Evaluates a registered RSP-QL query with Comunica each time one of its windows closes. Each
 * window's content (the triples of its elements) is loaded into the named graph of the window's
 * IRI, so that `WINDOW <w> { … }` (rewritten `GRAPH <w> { … }`) matches that window only.
 * Comunica is an optional peer dependency, imported on first use (`prepare()` or the first
 * evaluation); `QueryEngineMissingError` says how to install it.
 */
export class ContinuousQuery {
  readonly query: RegisteredQuery;
  #engine: Promise<SparqlEngine> | undefined;
  readonly #loader: QueryEngineLoader | undefined;
  readonly #windows: WindowState[];
  #previous = new Map<string, unknown>();

  constructor(query: string | RegisteredQuery, options: ContinuousQueryOptions = {}) {
    // Elements arrive after their generation: by default a window waits 500 ms past its end.
    const windowOptions: TimeWindowOptions = { allowedLatenessMs: 500, ...options.window };
    this.query = typeof query === 'string' ? parseRspQl(query) : query;
    this.#engine = options.engine === undefined ? undefined : Promise.resolve(options.engine);
    this.#loader = options.loadQueryEngine;
    this.#windows = this.query.windows.map((window) => ({
      name: window.name,
      stream: window.stream,
      spec: window.spec,
      operator:
        window.spec.kind === 'time'
          ? new TimeWindowOperator<WindowItem>(window.spec, windowOptions)
          : new CountWindowOperator<WindowItem>(window.spec),
      current: undefined,
    }));
  }

  /**
   * Loads the query engine, once: rejects with `QueryEngineMissingError` when it is not
   * installed. Optional (the first evaluation loads it), to fail before subscribing rather than
   * when the first window closes.
   */
  async prepare(): Promise<void> {
    await this.#loadedEngine();
  }

  #loadedEngine(): Promise<SparqlEngine> {
    this.#engine ??= loadQueryEngine(this.#loader);
    return this.#engine;
  }

  /** The distinct streams the query reads. */
  get streams(): string[] {
    return [...new Set(this.#windows.map((window) => window.stream))];
  }

  /** Late, skipped and overflowing elements per window. */
  get windowStats(): Record<string, WindowStats | undefined> {
    return Object.fromEntries(
      this.#windows.map((window) => [window.name, window.operator instanceof TimeWindowOperator ? window.operator.stats : undefined]),
    );
  }

  /**
   * Starts the query at `startMs` (server clock) with full windows: every time window's first
   * window becomes [startMs − RANGE, startMs), evaluated as soon as the watermark passes
   * `startMs`, and the result says, per stream, the time its history must be replayed from to
   * fill it (startMs − the longest RANGE on that stream). Streams read by count windows only
   * are not in it. Before the first element only.
   */
  startAt(startMs: number): ReadonlyMap<string, Date> {
    const fromMs = new Map<string, number>();
    for (const window of this.#windows) {
      if (!(window.operator instanceof TimeWindowOperator) || window.spec.kind !== 'time') continue;
      window.operator.start(startMs);
      fromMs.set(window.stream, Math.min(fromMs.get(window.stream) ?? startMs, startMs - window.spec.rangeMs));
    }
    return new Map([...fromMs].map(([stream, ms]) => [stream, new Date(ms)]));
  }

  /**
   * Feeds one element of `stream`; resolves with one result per window it closed.
   * `offsetMs` is the client's clock offset to the server (for the result latency).
   */
  async push(stream: string, item: WindowItem, offsetMs = 0): Promise<QueryResult[]> {
    const results: QueryResult[] = [];
    for (const window of this.#windows) {
      if (window.stream !== stream) continue;
      const closed =
        window.operator instanceof TimeWindowOperator ? window.operator.push(item.generatedAtMs, item) : window.operator.push(item);
      for (const content of closed) {
        window.current = content;
        results.push(await this.#evaluate(window.name, offsetMs));
      }
    }
    return results;
  }

  /**
   * Lets time pass for the time windows: `serverNowMs` is the current time on the server's clock
   * (client clock + offset). Windows whose end the watermark passes close now, even if the next
   * element is still seconds away, so that results do not wait for it.
   */
  async tick(serverNowMs: number, offsetMs = 0): Promise<QueryResult[]> {
    const results: QueryResult[] = [];
    for (const window of this.#windows) {
      if (!(window.operator instanceof TimeWindowOperator)) continue;
      for (const content of window.operator.advance(serverNowMs)) {
        window.current = content;
        results.push(await this.#evaluate(window.name, offsetMs));
      }
    }
    return results;
  }

  async #evaluate(trigger: string, offsetMs: number): Promise<QueryResult> {
    const started = performance.now();
    const store = new Store();
    let newest = Number.NEGATIVE_INFINITY;
    for (const window of this.#windows) {
      const graph = DataFactory.namedNode(this.#graphIri(window.name));
      for (const item of window.current?.items ?? []) {
        newest = Math.max(newest, item.generatedAtMs);
        for (const q of item.quads) store.addQuad(DataFactory.quad(q.subject, q.predicate, q.object, graph));
      }
    }
    const result = await (await this.#loadedEngine()).query(this.query.sparql, { sources: [store] });
    const windows = this.#windows.map((window) => ({
      name: window.name,
      start: window.current?.start ?? Number.NaN,
      end: window.current?.end ?? Number.NaN,
      elements: window.current?.items.length ?? 0,
    }));
    const base = { trigger, windows };
    const timing = () => ({ latencyMs: Date.now() + offsetMs - newest, evaluationMs: performance.now() - started });
    if (result.resultType === 'boolean') {
      return { ...base, resultType: 'boolean', boolean: await result.execute(), ...timing() };
    }
    if (result.resultType === 'quads') {
      const quads = await (await result.execute()).toArray();
      const kept = this.#apply(quads.map((q) => [quadKey(q), q] as const)).map(([, q]) => q);
      return { ...base, resultType: 'quads', quads: kept, ...timing() };
    }
    if (result.resultType === 'bindings') {
      const rows: Row[] = (await (await result.execute()).toArray()).map((binding) =>
        Object.fromEntries([...binding].map(([variable, term]) => [variable.value, term])),
      );
      const kept = this.#apply(rows.map((row) => [rowKey(row), row] as const)).map(([, row]) => row);
      const variables = (await result.metadata?.())?.variables.map((variable) => variable.value);
      return { ...base, resultType: 'bindings', bindings: kept, ...(variables === undefined ? {} : { variables }), ...timing() };
    }
    throw new Error(`unsupported query result type ${result.resultType}`);
  }

  /** RSTREAM: every result; ISTREAM: those new since the last evaluation; DSTREAM: those gone since. */
  #apply<T>(entries: ReadonlyArray<readonly [string, T]>): Array<readonly [string, T]> {
    const previous = this.#previous as Map<string, T>;
    const current = new Map(entries);
    this.#previous = current;
    switch (this.query.operator) {
      case 'RSTREAM':
        return [...entries];
      case 'ISTREAM':
        return entries.filter(([key]) => !previous.has(key));
      case 'DSTREAM':
        return [...previous].filter(([key]) => !current.has(key));
    }
  }

  #graphIri(name: string): string {
    if (name.startsWith('<')) return name.slice(1, -1);
    const colon = name.indexOf(':');
    const prefix = name.slice(0, colon);
    const declared = new RegExp(String.raw`PREFIX\s+${prefix.replace(/[.-]/g, '\\$&')}:\s*<([^>]*)>`, 'i').exec(this.query.sparql);
    return (declared?.[1] ?? '') + name.slice(colon + 1);
  }
}

const termKey = (term: Term): string =>
  term.termType === 'Literal' ? `"${term.value}"^^${term.datatype.value}@${term.language}` : `${term.termType}:${term.value}`;
const rowKey = (row: Row) =>
  JSON.stringify(
    Object.keys(row)
      .sort()
      .map((key) => [key, termKey(row[key] as Term)]),
  );
const quadKey = (q: Quad) => [q.subject, q.predicate, q.object, q.graph].map(termKey).join(' ');
