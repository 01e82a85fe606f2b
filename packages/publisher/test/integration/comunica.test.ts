import { QueryEngine } from '@comunica/query-sparql';
import { afterEach, describe, expect, it } from 'vitest';
import { sampleObservations, startTestPublisher, type TestPublisher } from '../../src/testing.js';

const query = `
  PREFIX sosa: <http://www.w3.org/ns/sosa/>
  SELECT (COUNT(?observation) AS ?observations) (AVG(?free) AS ?averageFree)
  WHERE { ?observation a sosa:Observation; sosa:hasSimpleResult ?free }`;

let running: TestPublisher | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/**
 * A generic Linked Data client, with its default settings (it asks for N-Quads first), sees the
 * observations of `/latest` with a plain query: no GRAPH, no unionDefaultGraph, no format forced.
 */
describe('Comunica (@comunica/query-sparql) over /latest', () => {
  it('counts and averages the observations of the latest element, whatever format it negotiates', async () => {
    // Comunica runs in the publisher's process here: its first query's long synchronous turns
    // (loading the engine) would be read by load shedding as the publisher's own event-loop delay
    // and answered 503 (it happened in CI). Shedding has its tests; this one is about Comunica.
    running = await startTestPublisher({ flags: ['--max-event-loop-delay-ms', '0', '--max-event-loop-turn-ms', '0'] });
    await running.push(sampleObservations(running.hub.definition.iri, [1, 2]));
    await running.push(sampleObservations(running.hub.definition.iri, [10, 20, 30, 40]));
    const engine = new QueryEngine();
    const latest = `${running.url}/streams/parking/latest`;
    const answer = async (source: string) => {
      const bindings = await (await engine.queryBindings(query, { sources: [source] })).toArray();
      return { count: Number(bindings[0]?.get('observations')?.value), average: Number(bindings[0]?.get('averageFree')?.value) };
    };
    expect(await answer(latest)).toEqual({ count: 4, average: 25 });
    for (const format of ['turtle', 'trig', 'ntriples', 'nquads', 'jsonld']) {
      expect(await answer(`${latest}?format=${format}`), format).toEqual({ count: 4, average: 25 });
    }
  });
});
