import { readFileSync } from 'node:fs';
import { DataFactory } from 'n3';
import { describe, expect, it } from 'vitest';
import { elementQuads } from '@rdf-stream/publisher';
import { decodeElement } from '../../../src/decode/decode-element.js';
import { observationsOf } from '../../../src/decode/observations.js';

const { blankNode, literal, namedNode, quad } = DataFactory;
const sosa = (name: string) => namedNode(`http://www.w3.org/ns/sosa/${name}`);
const qudt = (name: string) => namedNode(`http://qudt.org/schema/qudt/${name}`);
const xsd = (name: string) => namedNode(`http://www.w3.org/2001/XMLSchema#${name}`);

const ELEMENT = 'http://127.0.0.1:8080/streams/parking/elements/demo2026ab-42';
const STREAM = 'http://127.0.0.1:8080/streams/parking';
const VACANT = 'http://vocab.datex.org/terms#parkingNumberOfVacantSpaces';
const DEG_C = 'http://qudt.org/vocab/unit/DEG_C';

describe('observationsOf', () => {
  it.each(['trig', 'nq', 'jsonld'])('reads the golden demo element (%s) as plain values', async (extension) => {
    const text = readFileSync(new URL(`../../../../../ontologies/examples/parking-element.${extension}`, import.meta.url), 'utf8');
    const decoded = await decodeElement(text, extension === 'nq' ? 'nquads' : extension === 'trig' ? 'trig' : 'jsonld');
    const at = new Date('2026-11-22T16:20:05.123Z');
    const observations = observationsOf(decoded.quads);
    expect(observations.map((observation) => observation.value).sort()).toEqual([328, 363, 60]);
    expect(observations.find((observation) => observation.value === 328)).toEqual({
      observation: `${ELEMENT}#p01`,
      featureOfInterest: `${STREAM}/facilities/p01`,
      observedProperty: VACANT,
      value: 328,
      unit: undefined,
      phenomenonTime: undefined,
      resultTime: at,
      sensor: `${STREAM}/sensors/p01`,
    });
  });

  it('reads what the publisher writes: typed simple results, a QUDT quantity with its unit, both times', () => {
    const generatedAt = new Date('2026-11-22T16:00:00.000Z');
    const observedAt = new Date('2026-11-22T15:59:00.000Z');
    const base = { sensor: 'http://x/sensor', featureOfInterest: 'http://x/f', observedProperty: 'http://x/p' };
    const quads = elementQuads(ELEMENT, generatedAt, [
      { ...base, id: 'int', simpleResult: 12 },
      { ...base, id: 'dec', simpleResult: -1.5 },
      { ...base, id: 'bool', simpleResult: false },
      { ...base, id: 'str', simpleResult: '12' },
      { ...base, id: 'temp', simpleResult: 11.4, unit: DEG_C, phenomenonTime: observedAt },
    ]);
    const observations = observationsOf(quads);
    expect(observations.map(({ observation, value, unit }) => ({ observation, value, unit }))).toEqual([
      { observation: `${ELEMENT}#int`, value: 12, unit: undefined },
      { observation: `${ELEMENT}#dec`, value: -1.5, unit: undefined },
      { observation: `${ELEMENT}#bool`, value: false, unit: undefined },
      // A plain string stays a string, even when it reads as a number.
      { observation: `${ELEMENT}#str`, value: '12', unit: undefined },
      { observation: `${ELEMENT}#temp`, value: 11.4, unit: DEG_C },
    ]);
    expect(observations[4]).toMatchObject({ phenomenonTime: observedAt, resultTime: generatedAt, sensor: 'http://x/sensor' });
    expect(observations[0]!.phenomenonTime).toBeUndefined();
  });

  it('reads a blank-node result with qudt:unit, and leaves out missing units, times and sensors', () => {
    const o = namedNode('http://x/o');
    const result = blankNode('r');
    const quads = [
      quad(o, sosa('hasFeatureOfInterest'), namedNode('http://x/f')),
      quad(o, sosa('observedProperty'), namedNode('http://x/p')),
      quad(o, sosa('hasResult'), result),
      quad(result, qudt('numericValue'), literal('2.5E1', xsd('double'))),
      quad(result, qudt('unit'), namedNode(DEG_C)),
      quad(o, sosa('resultTime'), literal('not a time', xsd('dateTime'))),
      quad(namedNode('http://x/q'), sosa('hasFeatureOfInterest'), namedNode('http://x/f')),
      quad(namedNode('http://x/q'), sosa('observedProperty'), namedNode('http://x/p')),
      quad(namedNode('http://x/q'), sosa('hasSimpleResult'), literal('1', xsd('boolean'))),
    ];
    expect(observationsOf(quads)).toEqual([
      { observation: 'http://x/o', featureOfInterest: 'http://x/f', observedProperty: 'http://x/p', value: 25, unit: DEG_C, phenomenonTime: undefined, resultTime: undefined, sensor: undefined },
      { observation: 'http://x/q', featureOfInterest: 'http://x/f', observedProperty: 'http://x/p', value: true, unit: undefined, phenomenonTime: undefined, resultTime: undefined, sensor: undefined },
    ]);
  });

  it('skips subjects without a feature of interest, a property or a result, and keeps a malformed number as text', () => {
    const quads = [
      quad(namedNode('http://x/no-result'), sosa('hasFeatureOfInterest'), namedNode('http://x/f')),
      quad(namedNode('http://x/no-result'), sosa('observedProperty'), namedNode('http://x/p')),
      quad(namedNode('http://x/no-feature'), sosa('observedProperty'), namedNode('http://x/p')),
      quad(namedNode('http://x/no-feature'), sosa('hasSimpleResult'), literal('3', xsd('integer'))),
      quad(namedNode('http://x/bad'), sosa('hasFeatureOfInterest'), namedNode('http://x/f')),
      quad(namedNode('http://x/bad'), sosa('observedProperty'), namedNode('http://x/p')),
      quad(namedNode('http://x/bad'), sosa('hasSimpleResult'), literal('twelve', xsd('integer'))),
    ];
    expect(observationsOf(quads).map(({ observation, value }) => ({ observation, value }))).toEqual([{ observation: 'http://x/bad', value: 'twelve' }]);
  });
});
