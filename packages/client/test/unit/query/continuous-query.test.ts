import type { Quad } from '@rdfjs/types';
import { DataFactory } from 'n3';
import { describe, expect, it } from 'vitest';
import { ContinuousQuery, type WindowItem } from '../../../src/query/continuous-query.js';

const { namedNode, literal, quad } = DataFactory;
const SOSA = 'http://www.w3.org/ns/sosa/';
const XSD_INTEGER = namedNode('http://www.w3.org/2001/XMLSchema#integer');
const stream = 'http://127.0.0.1:8080/streams/parking';

/** An element at `timeMs` with one observation per [facility, free] pair. */
function element(seq: number, timeMs: number, values: Array<[string, number]>): WindowItem {
  const graph = namedNode(`${stream}/elements/${seq}`);
  const quads: Quad[] = values.flatMap(([facility, free]) => {
    const observation = namedNode(`${graph.value}#${facility}`);
    return [
      quad(observation, namedNode(`${SOSA}hasFeatureOfInterest`), namedNode(`${stream}/facilities/${facility}`), graph),
      quad(observation, namedNode(`${SOSA}hasSimpleResult`), literal(String(free), XSD_INTEGER), graph),
    ];
  });
  return { seq, generatedAtMs: timeMs, quads };
}

const averageQuery = (operator: string, window: string) => `PREFIX sosa: <${SOSA}>
REGISTER ${operator} <http://ex/q> AS
SELECT ?facility (AVG(?free) AS ?average) (COUNT(?free) AS ?n)
FROM NAMED WINDOW <http://ex/w> ON <${stream}> ${window}
WHERE { WINDOW <http://ex/w> { ?o sosa:hasFeatureOfInterest ?facility ; sosa:hasSimpleResult ?free } }
GROUP BY ?facility ORDER BY ?facility`;

/** Rows as plain values: facility ids, and numbers compared as numbers (AVG gives xsd:decimal "15.0"). */
const table = (rows: readonly Record<string, { value: string; termType: string }>[] | undefined) =>
  (rows ?? []).map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([key, term]) => [
        key,
        term.termType === 'Literal' ? Number(term.value) : term.value.replace(`${stream}/facilities/`, ''),
      ]),
    ),
  );

describe('ContinuousQuery (Comunica over each closed window)', () => {
  it('averages per facility over RANGE 30 s STEP 10 s windows, values checked by hand', async () => {
    const query = new ContinuousQuery(averageQuery('RSTREAM', '[RANGE PT30S STEP PT10S]'));
    expect(await query.push(stream, element(1, 1_000, [['p1', 10], ['p2', 100]]))).toEqual([]);
    expect(await query.push(stream, element(2, 11_000, [['p1', 20], ['p2', 200]]))).toHaveLength(1); // closes [-20 s, 10 s)
    const results = await query.push(stream, element(3, 21_000, [['p1', 30]])); // closes [-10 s, 20 s)
    expect(results).toHaveLength(1);
    expect(results[0]!.windows).toEqual([{ name: '<http://ex/w>', start: -10_000, end: 20_000, elements: 2 }]);
    expect(table(results[0]!.bindings)).toEqual([
      { facility: 'p1', average: 15, n: 2 },
      { facility: 'p2', average: 150, n: 2 },
    ]);
    const next = await query.push(stream, element(4, 31_000, [['p1', 40]])); // closes [0 s, 30 s): elements 1-3
    expect(table(next[0]!.bindings)).toEqual([
      { facility: 'p1', average: 20, n: 3 },
      { facility: 'p2', average: 150, n: 2 },
    ]);
    expect(next[0]!.latencyMs).toBeGreaterThan(0);
  });

  it('closes time windows on the clock (tick), 500 ms after their end by default, without waiting for the next element', async () => {
    const query = new ContinuousQuery(averageQuery('RSTREAM', '[RANGE PT10S]'));
    await query.push(stream, element(1, 1_000, [['p1', 5]]));
    expect(await query.tick(10_400)).toEqual([]);
    const [result] = await query.tick(10_500);
    expect(result!.windows[0]).toMatchObject({ start: 0, end: 10_000, elements: 1 });
    // An element of that window arriving now is late: counted, not used.
    await query.push(stream, element(2, 9_999, [['p1', 6]]));
    expect(query.windowStats['<http://ex/w>']?.late).toBe(1);
  });

  it('startAt: the first window is [start − RANGE, start), filled with past elements, and says where each stream\'s history starts', async () => {
    const query = new ContinuousQuery(`PREFIX sosa: <${SOSA}>
REGISTER RSTREAM <http://ex/q> AS SELECT (COUNT(?free) AS ?n)
FROM NAMED WINDOW <http://ex/w> ON <${stream}> [RANGE PT30S STEP PT10S]
FROM NAMED WINDOW <http://ex/v> ON <${stream}> [RANGE PT5S]
FROM NAMED WINDOW <http://ex/c> ON <http://ex/counted> [ELEMENTS 2]
WHERE { WINDOW <http://ex/w> { ?o sosa:hasSimpleResult ?free } }`);
    const startMs = 100_123;
    expect(query.startAt(startMs)).toEqual(new Map([[stream, new Date(startMs - 30_000)]]));
    for (const [seq, ageMs] of [[1, 29_000], [2, 15_000], [3, 1_000]] as const) {
      expect(await query.push(stream, element(seq, startMs - ageMs, [['p1', seq]]))).toEqual([]);
    }
    const results = await query.tick(startMs + 500);
    expect(results.find((result) => result.trigger === '<http://ex/w>')!.windows[0]).toEqual({ name: '<http://ex/w>', start: startMs - 30_000, end: startMs, elements: 3 });
    expect(table(results.find((result) => result.trigger === '<http://ex/w>')!.bindings)).toEqual([{ n: 3 }]);
    expect(query.windowStats['<http://ex/w>']?.late).toBe(0);
  });

  it('evaluates empty windows too', async () => {
    const query = new ContinuousQuery(averageQuery('RSTREAM', '[RANGE PT10S]'));
    await query.push(stream, element(1, 1_000, [['p1', 5]]));
    const results = await query.push(stream, element(2, 25_000, [['p1', 7]]));
    expect(results.map((result) => [result.windows[0]!.start, result.windows[0]!.elements, table(result.bindings).length])).toEqual([
      [0, 1, 1],
      [10_000, 0, 0],
    ]);
  });

  it('ISTREAM emits only rows that are new, DSTREAM only rows that are gone', async () => {
    const rows = async (operator: string) => {
      const query = new ContinuousQuery(averageQuery(operator, '[ELEMENTS 1]'));
      const first = await query.push(stream, element(1, 1_000, [['p1', 5], ['p2', 6]]));
      const second = await query.push(stream, element(2, 2_000, [['p1', 5], ['p2', 9]]));
      return [table(first[0]!.bindings), table(second[0]!.bindings)];
    };
    expect(await rows('ISTREAM')).toEqual([
      [
        { facility: 'p1', average: 5, n: 1 },
        { facility: 'p2', average: 6, n: 1 },
      ],
      [{ facility: 'p2', average: 9, n: 1 }],
    ]);
    expect(await rows('DSTREAM')).toEqual([[], [{ facility: 'p2', average: 6, n: 1 }]]);
  });

  it('answers ASK and CONSTRUCT', async () => {
    const ask = new ContinuousQuery(`REGISTER RSTREAM <http://ex/q> AS ASK FROM NAMED WINDOW <http://ex/w> ON <${stream}> [ELEMENTS 1]
WHERE { WINDOW <http://ex/w> { ?o <${SOSA}hasSimpleResult> ?v FILTER(?v > 50) } }`);
    expect((await ask.push(stream, element(1, 0, [['p1', 10]])))[0]!.boolean).toBe(false);
    expect((await ask.push(stream, element(2, 0, [['p1', 99]])))[0]!.boolean).toBe(true);
    const construct = new ContinuousQuery(`REGISTER RSTREAM <http://ex/q> AS CONSTRUCT { ?f <http://ex/full> true }
FROM NAMED WINDOW <http://ex/w> ON <${stream}> [ELEMENTS 1]
WHERE { WINDOW <http://ex/w> { ?o <${SOSA}hasFeatureOfInterest> ?f ; <${SOSA}hasSimpleResult> 0 } }`);
    const [result] = await construct.push(stream, element(1, 0, [['p1', 0], ['p2', 3]]));
    expect(result!.quads!.map((q) => q.subject.value)).toEqual([`${stream}/facilities/p1`]);
  });

  it('ignores elements of streams it does not read', async () => {
    const query = new ContinuousQuery(averageQuery('RSTREAM', '[ELEMENTS 1]'));
    expect(await query.push('http://elsewhere/streams/x', element(1, 0, [['p1', 1]]))).toEqual([]);
    expect(query.streams).toEqual([stream]);
  });
});
