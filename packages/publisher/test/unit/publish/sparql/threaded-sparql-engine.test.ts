import { afterEach, describe, expect, it } from 'vitest';
import { ThreadedSparqlEngine, type SparqlEngineLimits, type SparqlQuery } from '../../../../src/publish/sparql/threaded-sparql-engine.js';
import { negotiateResultMediaTypes } from '../../../../src/render/sparql-result-formats.js';

const limits: SparqlEngineLimits = {
  sparqlTimeoutMs: 30_000,
  sparqlMaxResults: 100,
  sparqlMaxQueued: 4,
  sparqlMaxElements: 2,
  sparqlCacheElements: 2,
  sparqlCacheQuads: 2,
};

/** Element `seq` of a fake stream: one triple, `<urn:s{seq}> <urn:p> {seq}`, in its graph. */
const element = (seq: number) => ({
  streamId: 's',
  epoch: 'e',
  seq,
  graph: `urn:g${seq}`,
  documents: { nquads: Buffer.from(`<urn:s${seq}> <urn:p> "${seq}"^^<http://www.w3.org/2001/XMLSchema#integer> <urn:g${seq}> .\n`) },
});
const query = (seqs: number[]): SparqlQuery => ({
  query: 'SELECT (SUM(?v) AS ?sum) WHERE { ?s <urn:p> ?v }',
  baseIri: 'urn:endpoint',
  elements: seqs.map(element) as unknown as SparqlQuery['elements'],
  mediaTypes: negotiateResultMediaTypes('text/csv'),
});

let engine: ThreadedSparqlEngine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

describe('ThreadedSparqlEngine', () => {
  it('sends an element the thread holds (sparqlCacheElements) once, and again once it was evicted', async () => {
    engine = new ThreadedSparqlEngine(limits);
    const sum = async (seqs: number[]) => {
      const outcome = await engine!.evaluate(query(seqs));
      if (outcome.kind !== 'result') throw new Error(outcome.kind);
      return Number(outcome.body.trim().split(/\r?\n/)[1]);
    };
    expect(await sum([1, 2])).toBe(3);
    expect(engine.documentsSent).toBe(2);
    expect(await sum([1, 2])).toBe(3);
    expect(await sum([2])).toBe(2);
    expect(engine.documentsSent).toBe(2);
    // Two held at most: 3 evicts 1, the least recently used.
    expect(await sum([3])).toBe(3);
    expect(engine.documentsSent).toBe(3);
    expect(await sum([1, 2])).toBe(3);
    expect(engine.documentsSent).toBe(4);
    expect(await sum([2, 3])).toBe(5);
  });

  it('keeps the stores of windows up to sparqlCacheQuads quads, and builds a larger one anew each time', async () => {
    // Each element is one quad in its graph and its copy in the default graph: [1, 2] is 4 quads.
    const reused = async (cacheQuads: number) => {
      engine = new ThreadedSparqlEngine({ ...limits, sparqlCacheQuads: cacheQuads });
      const outcomes = [await engine.evaluate(query([1, 2])), await engine.evaluate(query([1, 2]))];
      await engine.close();
      return outcomes.map((outcome) => (outcome.kind === 'result' ? outcome.storeReused : outcome.kind));
    };
    expect(await reused(4)).toEqual([false, true]);
    expect(await reused(3)).toEqual([false, false]);
  });

  it('holds a whole window even when sparqlCacheElements is smaller than sparqlMaxElements', async () => {
    engine = new ThreadedSparqlEngine({ ...limits, sparqlCacheElements: 1, sparqlCacheQuads: 0 });
    const outcome = await engine.evaluate(query([4, 5]));
    expect(outcome.kind === 'result' ? outcome.body.trim().split(/\r?\n/)[1] : outcome.kind).toBe('9');
  });

  it('refuses a query when sparqlMaxQueued wait behind the running one', async () => {
    engine = new ThreadedSparqlEngine({ ...limits, sparqlMaxQueued: 1 });
    const outcomes = await Promise.all([engine.evaluate(query([1])), engine.evaluate(query([1])), engine.evaluate(query([1]))]);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['result', 'result', 'busy']);
  });
});
