import { observationsOf } from '@rdf-stream/client/live';
import { DataFactory } from 'n3';
import { describe, expect, it } from 'vitest';
import { pageObservations } from '../../../src/page/observations.js';

const { namedNode, literal, quad } = DataFactory;
const sosa = (name: string) => namedNode(`http://www.w3.org/ns/sosa/${name}`);
const qudt = (name: string) => namedNode(`http://qudt.org/schema/qudt/${name}`);
const xsd = (name: string) => namedNode(`http://www.w3.org/2001/XMLSchema#${name}`);

describe('pageObservations', () => {
  it("shows an update's observations at their phenomenon time, else the element's, with the feature's label", () => {
    const g = namedNode('http://x/g');
    const quads = [
      quad(namedNode('http://x/g#a'), sosa('hasFeatureOfInterest'), namedNode('http://x/facilities/a'), g),
      quad(namedNode('http://x/g#a'), sosa('observedProperty'), namedNode('http://x/free'), g),
      quad(namedNode('http://x/g#a'), sosa('hasSimpleResult'), literal('12', xsd('integer')), g),
      quad(namedNode('http://x/facilities/a'), namedNode('http://www.w3.org/2000/01/rdf-schema#label'), literal('Centre'), g),
      quad(namedNode('http://x/g#b'), sosa('hasFeatureOfInterest'), namedNode('http://x/stations/b'), g),
      quad(namedNode('http://x/g#b'), sosa('observedProperty'), namedNode('http://x/temperature'), g),
      quad(namedNode('http://x/g#b'), sosa('hasResult'), namedNode('http://x/g#b-result'), g),
      quad(namedNode('http://x/g#b'), sosa('phenomenonTime'), literal('2026-03-14T08:00:00.000Z', xsd('dateTime')), g),
      quad(namedNode('http://x/g#b-result'), qudt('numericValue'), literal('11.4', xsd('decimal')), g),
      quad(namedNode('http://x/g#b-result'), qudt('hasUnit'), namedNode('http://qudt.org/vocab/unit/DEG_C'), g),
    ];
    const shown = pageObservations({ quads, observations: observationsOf(quads) }, 1_000);
    expect(shown.map(({ featureOfInterest, value, unit, observedAt, label }) => ({ featureOfInterest, value, unit, observedAt, label }))).toEqual([
      { featureOfInterest: 'http://x/facilities/a', value: 12, unit: undefined, observedAt: 1_000, label: 'Centre' },
      {
        featureOfInterest: 'http://x/stations/b',
        value: 11.4,
        unit: 'http://qudt.org/vocab/unit/DEG_C',
        observedAt: Date.parse('2026-03-14T08:00:00.000Z'),
        label: undefined,
      },
    ]);
  });
});
