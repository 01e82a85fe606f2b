import { describe, expect, it } from 'vitest';
import { ContinuousQuery } from '../../../src/query/continuous-query.js';
import { loadQueryEngine, type QueryEngineLoader } from '../../../src/query/load-query-engine.js';
import { QueryEngineMissingError } from '../../../src/query/query-engine-missing-error.js';
import { runContinuousQuery } from '../../../src/query/run-continuous-query.js';

/** What Node's `import()` rejects with when the package is not installed. */
const notInstalled: QueryEngineLoader = () =>
  Promise.reject(
    Object.assign(new Error("Cannot find package '@comunica/query-sparql-rdfjs' imported from /app/node_modules/@rdf-stream/client/dist/query/load-query-engine.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    }),
  );

const query = `REGISTER RSTREAM <http://ex/q> AS SELECT * FROM NAMED WINDOW <http://ex/w> ON <http://127.0.0.1:9/streams/s> [ELEMENTS 1]
WHERE { WINDOW <http://ex/w> { ?s ?p ?o } }`;

describe('loading the query engine', () => {
  it('says which package to install, and how, when it is not installed', async () => {
    const failure = await loadQueryEngine(notInstalled).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(QueryEngineMissingError);
    expect(failure).toMatchObject({ code: 'CLIENT_ERR_QUERY_ENGINE_MISSING', name: 'QueryEngineMissingError' });
    expect((failure as Error).message).toContain("Cannot find package '@comunica/query-sparql-rdfjs'");
    expect((failure as Error).message).toMatch(/needs @comunica\/query-sparql-rdfjs, an optional peer dependency .*: npm install @comunica\/query-sparql-rdfjs@\^5\.4\.1$/);
    expect((failure as Error).cause).toMatchObject({ code: 'ERR_MODULE_NOT_FOUND' });
  });

  it('loads the installed engine by default', async () => {
    const engine = await loadQueryEngine();
    expect(typeof engine.query).toBe('function');
  }, 30_000);

  it('takes the engine class from a bundled CommonJS module, whose exports are under default', async () => {
    const engine = { query: () => Promise.reject(new Error('unused')) };
    class QueryEngine {
      query = engine.query;
    }
    expect(typeof (await loadQueryEngine(() => Promise.resolve({ QueryEngine }))).query).toBe('function');
    expect(typeof (await loadQueryEngine(() => Promise.resolve({ default: { QueryEngine } }))).query).toBe('function');
  });

  it('says so when the module has no engine class', async () => {
    const failure = await loadQueryEngine(() => Promise.resolve({ default: {} } as never)).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'CLIENT_ERR_QUERY_ENGINE_MISSING' });
    expect((failure as Error).message).toContain('the module exports no QueryEngine class');
  });

  it('runContinuousQuery fails with it before subscribing to anything', async () => {
    const requested: string[] = [];
    const results = runContinuousQuery(new ContinuousQuery(query, { loadQueryEngine: notInstalled }), {
      fetch: async (input) => {
        requested.push(String(input));
        return new Response(null, { status: 503 });
      },
    });
    await expect(results.next()).rejects.toBeInstanceOf(QueryEngineMissingError);
    expect(requested).toEqual([]);
  });

  it('a query given as text takes the loader from the options', async () => {
    await expect(runContinuousQuery(query, { loadQueryEngine: notInstalled }).next()).rejects.toMatchObject({ code: 'CLIENT_ERR_QUERY_ENGINE_MISSING' });
  });
});
