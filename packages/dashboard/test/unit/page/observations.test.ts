import { DataFactory } from 'n3';
import { describe, expect, it } from 'vitest';
import { observationsOf } from '../../../src/page/observations.js';

const { namedNode, literal, quad } = DataFactory;
const sosa = (name: string) => namedNode(`http://www.w3.org/ns/sosa/${name}`);
const qudt = (name: string) => namedNode(`http://qudt.org/schema/qudt/${name}`);
const xsd = (name: string) => namedNode(`http://www.w3.org/2001/XMLSchema#${name}`);

describe('observationsOf', () => {
  it('reads simple results and QUDT quantity values, with the phenomenon time when given', () => {
    const g = namedNode('http://x/g');
    const quads = [
      quad(namedNode('http://x/g#a'), sosa('hasFeatureOfInterest'), namedNode('http://x/facilities/a'), g),
      quad(namedNode('http://x/g#a'), sosa('observedProperty'), namedNode('http://x/free'), g),
      quad(namedNode('http://x/g#a'), sosa('hasSimpleResult'), literal('12', xsd('integer')), g),
      quad(namedNode('http://x/g#b'), sosa('hasFeatureOfInterest'), namedNode('http://x/stations/b'), g),
      quad(namedNode('http://x/g#b'), sosa('observedProperty'), namedNode('http://x/temperature'), g),
      quad(namedNode('http://x/g#b'), sosa('hasResult'), namedNode('http://x/g#b-result'), g),
      quad(namedNode('http://x/g#b'), sosa('phenomenonTime'), literal('2026-03-14T08:00:00.000Z', xsd('dateTime')), g),
      quad(namedNode('http://x/g#b-result'), qudt('numericValue'), literal('11.4', xsd('decimal')), g),
      quad(namedNode('http://x/g#b-result'), qudt('hasUnit'), namedNode('http://qudt.org/vocab/unit/DEG_C'), g),
      // Not an observation: skipped.
      quad(namedNode('http://x/other'), sosa('observedProperty'), namedNode('http://x/free'), g),
    ];
    expect(observationsOf(quads, 1_000)).toEqual([
      { featureOfInterest: 'http://x/facilities/a', observedProperty: 'http://x/free', value: 12, unit: undefined, observedAt: 1_000, label: undefined },
      {
        featureOfInterest: 'http://x/stations/b',
        observedProperty: 'http://x/temperature',
        value: 11.4,
        unit: 'http://qudt.org/vocab/unit/DEG_C',
        observedAt: Date.parse('2026-03-14T08:00:00.000Z'),
        label: undefined,
      },
    ]);
  });
});
