import type { QueryEngine } from '@comunica/query-sparql-rdfjs';
import { QueryEngineMissingError } from './query-engine-missing-error.js';

/** What a continuous query needs of a SPARQL engine: Comunica's `QueryEngine#query`. */
export type SparqlEngine = Pick<QueryEngine, 'query'>;

/**
 * Imports the engine's module. The default imports `@comunica/query-sparql-rdfjs` from where
 * `@rdf-stream/client` is installed; a page bundled without it, or a test simulating its
 * absence, passes its own (`() => import('@comunica/query-sparql-rdfjs')`).
 */
export type QueryEngineLoader = () => Promise<{ readonly QueryEngine: new () => SparqlEngine }>;

/**
 * The only import of Comunica in the package, and a dynamic one, so that subscribing never
 * loads it. Inside `try`: a bundler (esbuild) that cannot resolve the package then leaves the
 * import for run time instead of failing the build of a page that only subscribes.
 */
export async function importComunica(): Promise<{ readonly QueryEngine: new () => SparqlEngine }> {
  try {
    return await import('@comunica/query-sparql-rdfjs');
  } catch (error) {
    throw new QueryEngineMissingError(error);
  }
}

/** A new engine from `loader`'s module; rejects with `QueryEngineMissingError` when it cannot be loaded. */
export async function loadQueryEngine(loader: QueryEngineLoader = importComunica): Promise<SparqlEngine> {
  let module: Awaited<ReturnType<QueryEngineLoader>>;
  try {
    module = await loader();
  } catch (error) {
    throw error instanceof QueryEngineMissingError ? error : new QueryEngineMissingError(error);
  }
  return new module.QueryEngine();
}
