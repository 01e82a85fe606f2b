import type { QueryResult } from '@rdf-stream/client';
import { DataFactory } from 'n3';
import { describe, expect, it } from 'vitest';
import { resultView } from '../../../src/page/query-messages.js';

const { namedNode, literal, blankNode, quad } = DataFactory;
const xsd = (name: string) => namedNode(`http://www.w3.org/2001/XMLSchema#${name}`);
const base = { trigger: 'w', windows: [{ name: 'w', start: 1_000, end: 31_000, elements: 3 }], latencyMs: 5, evaluationMs: 12 } as const;

describe('resultView', () => {
  it("carries each row's terms as the strings the table shows, and survives a structured clone unchanged", () => {
    const result: QueryResult = {
      ...base,
      resultType: 'bindings',
      variables: ['facility', 'averageFree', 'note'],
      bindings: [
        { facility: namedNode('http://x/facilities/a'), averageFree: literal('12.5', xsd('decimal')) },
        { facility: blankNode('b1'), averageFree: literal('3', xsd('integer')), note: literal('full', 'en') },
      ],
    };
    const view = resultView(result);
    expect(view).toEqual({
      windows: [{ start: 1_000, end: 31_000, elements: 3 }],
      resultType: 'bindings',
      variables: ['facility', 'averageFree', 'note'],
      rows: [
        { facility: 'http://x/facilities/a', averageFree: '12.5' },
        { facility: 'b1', averageFree: '3', note: 'full' },
      ],
      quadCount: 0,
      boolean: undefined,
      evaluationMs: 12,
    });
    // What postMessage does to it: an N3 term would lose its `value` here, a view loses nothing.
    expect(structuredClone(view)).toEqual(view);
    expect(structuredClone(literal('12.5', xsd('decimal'))).value).toBeUndefined();
  });

  it('names the variables the rows bind, in order, when the engine does not say', () => {
    const view = resultView({ ...base, resultType: 'bindings', bindings: [{ a: literal('1') }, { a: literal('2'), b: literal('3') }] });
    expect(view.variables).toEqual(['a', 'b']);
  });

  it('counts the triples of a CONSTRUCT and keeps the answer of an ASK', () => {
    const triple = quad(namedNode('http://x/s'), namedNode('http://x/p'), literal('o'));
    expect(resultView({ ...base, resultType: 'quads', quads: [triple, triple] })).toMatchObject({ resultType: 'quads', quadCount: 2, rows: [] });
    expect(resultView({ ...base, resultType: 'boolean', boolean: false })).toMatchObject({ resultType: 'boolean', boolean: false });
  });
});
