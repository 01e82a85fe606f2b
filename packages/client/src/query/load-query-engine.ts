import type { DatasetCore, Quad, Term, Variable } from '@rdfjs/types';
import { QueryEngineMissingError } from './query-engine-missing-error.js';

/** The part of a result stream a continuous query reads (Comunica's `AsyncIterator#toArray`). */
export interface SparqlResultArray<T> {
  toArray(): Promise<T[]>;
}

/** A query's result, as Comunica's `QueryEngine#query` gives it, to be executed. */
export type SparqlQueryResult =
  | {
      readonly resultType: 'bindings';
      execute(): Promise<SparqlResultArray<Iterable<[Variable, Term]>>>;
      /** The projected variables (Comunica's `metadata()`), also when no row binds them. */
      metadata?(): Promise<{ readonly variables: readonly Variable[] }>;
    }
  | { readonly resultType: 'quads'; execute(): Promise<SparqlResultArray<Quad>> }
  | { readonly resultType: 'boolean'; execute(): Promise<boolean> }
  | { readonly resultType: 'void'; execute(): Promise<void> };

/**
 * What a continuous query needs of a SPARQL engine: Comunica's `QueryEngine#query` over one
 * RDF/JS store. Declared here rather than taken from Comunica's types, so that the package's
 * declarations name nothing of an optional peer dependency: a TypeScript project that only
 * subscribes compiles without Comunica installed.
 */
export interface SparqlEngine {
  query(query: string, context: { readonly sources: [DatasetCore] }): Promise<SparqlQueryResult>;
}

/** An engine class, as a module exports it. */
type QueryEngineClass = new () => SparqlEngine;

/**
 * What importing the engine's module gives: its `QueryEngine` class, named, or (a CommonJS module
 * such as Comunica, through a bundler's interop: esbuild's lazily loaded chunk) under `default`.
 */
export type QueryEngineModule = { readonly QueryEngine: QueryEngineClass } | { readonly default: { readonly QueryEngine: QueryEngineClass } };

/**
 * Imports the engine's module. The default imports `@comunica/query-sparql-rdfjs` from where
 * `@rdf-stream/client` is installed; a page bundled without it, or a test simulating its
 * absence, passes its own (`() => import('@comunica/query-sparql-rdfjs')`).
 */
export type QueryEngineLoader = () => Promise<QueryEngineModule>;

/**
 * The only import of Comunica in the package, and a dynamic one, so that subscribing never
 * loads it. Inside `try`: a bundler (esbuild) that cannot resolve the package then leaves the
 * import for run time instead of failing the build of a page that only subscribes.
 */
export async function importComunica(): Promise<QueryEngineModule> {
  try {
    return await import('@comunica/query-sparql-rdfjs');
  } catch (error) {
    throw new QueryEngineMissingError(error);
  }
}

/** A new engine from `loader`'s module; rejects with `QueryEngineMissingError` when it cannot be loaded. */
export async function loadQueryEngine(loader: QueryEngineLoader = importComunica): Promise<SparqlEngine> {
  let module: QueryEngineModule;
  try {
    module = await loader();
  } catch (error) {
    throw error instanceof QueryEngineMissingError ? error : new QueryEngineMissingError(error);
  }
  const QueryEngine = 'QueryEngine' in module ? module.QueryEngine : (module.default as Partial<{ QueryEngine: QueryEngineClass }> | undefined)?.QueryEngine;
  if (typeof QueryEngine !== 'function') throw new QueryEngineMissingError(new TypeError('the module exports no QueryEngine class'));
  return new QueryEngine();
}
