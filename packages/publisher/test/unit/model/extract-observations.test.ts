import { Parser } from 'n3';
import { describe, expect, it } from 'vitest';
import { extractObservations } from '../../../src/model/extract-observations.js';

const prefixes = `@prefix sosa: <http://www.w3.org/ns/sosa/>. @prefix xsd: <http://www.w3.org/2001/XMLSchema#>.
@prefix qudt: <http://qudt.org/schema/qudt/>. @prefix unit: <http://qudt.org/vocab/unit/>. @prefix ex: <http://ex.org/>.
`;
const extract = (turtle: string) => extractObservations(new Parser({ format: 'application/trig' }).parse(prefixes + turtle));

/** The sensor, property and feature every valid observation below shares. */
const about = 'sosa:madeBySensor ex:sensor; sosa:observedProperty ex:property; sosa:hasFeatureOfInterest ex:feature';
const shared = { sensor: 'http://ex.org/sensor', observedProperty: 'http://ex.org/property', featureOfInterest: 'http://ex.org/feature' };

describe('extractObservations', () => {
  it('reads simple results as numbers, booleans and strings', () => {
    const { observations, rejected } = extract(`
      ex:count a sosa:Observation; ${about}; sosa:hasSimpleResult 42.
      ex:level a sosa:Observation; ${about}; sosa:hasSimpleResult 3.25.
      ex:ratio a sosa:Observation; ${about}; sosa:hasSimpleResult "2.5E-1"^^xsd:double.
      ex:open a sosa:Observation; ${about}; sosa:hasSimpleResult true.
      ex:state a sosa:Observation; ${about}; sosa:hasSimpleResult "closed for works".
      ex:when a sosa:Observation; ${about}; sosa:hasSimpleResult "2026-01-01"^^xsd:date.`);
    expect(rejected).toEqual([]);
    expect(observations).toEqual([
      { id: 'count', ...shared, simpleResult: 42 },
      { id: 'level', ...shared, simpleResult: 3.25 },
      { id: 'ratio', ...shared, simpleResult: 0.25 },
      { id: 'open', ...shared, simpleResult: true },
      { id: 'state', ...shared, simpleResult: 'closed for works' },
      // a literal of another datatype keeps its lexical form
      { id: 'when', ...shared, simpleResult: '2026-01-01' },
    ]);
  });

  it('reads a QUDT result as its numeric value and unit, the result node an IRI or a blank node', () => {
    const { observations, rejected } = extract(`
      ex:no2 a sosa:Observation; ${about}; sosa:hasResult ex:no2-result.
      ex:no2-result a qudt:QuantityValue; qudt:numericValue 41.3; qudt:hasUnit unit:MicroGM-PER-M3.
      ex:temperature a sosa:Observation; ${about}; sosa:hasResult [ qudt:numericValue "-2"^^xsd:integer; qudt:hasUnit unit:DEG_C ].`);
    expect(rejected).toEqual([]);
    expect(observations).toEqual([
      { id: 'no2', ...shared, simpleResult: 41.3, unit: 'http://qudt.org/vocab/unit/MicroGM-PER-M3' },
      { id: 'temperature', ...shared, simpleResult: -2, unit: 'http://qudt.org/vocab/unit/DEG_C' },
    ]);
  });

  it('keeps sosa:resultTime and sosa:phenomenonTime, and ignores a time that is not one', () => {
    const { observations } = extract(`
      ex:both a sosa:Observation; ${about}; sosa:hasSimpleResult 1;
        sosa:phenomenonTime "2026-03-14T07:59:50Z"^^xsd:dateTime; sosa:resultTime "2026-03-14T08:00:00.250Z"^^xsd:dateTime.
      ex:neither a sosa:Observation; ${about}; sosa:hasSimpleResult 2; sosa:resultTime "soon".`);
    expect(observations).toEqual([
      {
        id: 'both',
        ...shared,
        simpleResult: 1,
        resultTime: new Date('2026-03-14T08:00:00.250Z'),
        phenomenonTime: new Date('2026-03-14T07:59:50Z'),
      },
      { id: 'neither', ...shared, simpleResult: 2 },
    ]);
  });

  it('finds observations by rdf:type or by sosa:madeBySensor, in any graph, and nothing else', () => {
    const { observations, rejected } = extract(`
      ex:untyped ${about}; sosa:hasSimpleResult 1.
      ex:g { ex:graphed a sosa:Observation; ${about}; sosa:hasSimpleResult 2. }
      ex:sensor a sosa:Sensor; ex:label "not an observation".`);
    expect(rejected).toEqual([]);
    expect(observations.map((o) => o.id)).toEqual(['untyped', 'graphed']);
  });

  it('rejects what it cannot read, saying why', () => {
    const { observations, rejected } = extract(`
      ex:no-feature a sosa:Observation; sosa:madeBySensor ex:sensor; sosa:observedProperty ex:property; sosa:hasSimpleResult 1.
      ex:literal-sensor a sosa:Observation; sosa:madeBySensor "sensor 7"; sosa:observedProperty ex:property;
        sosa:hasFeatureOfInterest ex:feature; sosa:hasSimpleResult 1.
      ex:no-result a sosa:Observation; ${about}.
      ex:iri-result a sosa:Observation; ${about}; sosa:hasSimpleResult ex:forty-two.
      ex:no-unit a sosa:Observation; ${about}; sosa:hasResult [ qudt:numericValue 3.5 ].
      ex:text-value a sosa:Observation; ${about}; sosa:hasResult [ qudt:numericValue "high"; qudt:hasUnit unit:DEG_C ].
      ex:dangling a sosa:Observation; ${about}; sosa:hasResult ex:elsewhere.
      ex:fine a sosa:Observation; ${about}; sosa:hasSimpleResult 7.`);
    expect(observations.map((o) => o.id)).toEqual(['fine']);
    const identity = 'needs an IRI for sosa:madeBySensor, sosa:observedProperty and sosa:hasFeatureOfInterest';
    const quantity = 'sosa:hasResult needs a numeric qudt:numericValue and a qudt:hasUnit IRI';
    expect(rejected).toEqual([
      { subject: 'http://ex.org/no-feature', reason: identity },
      { subject: 'http://ex.org/literal-sensor', reason: identity },
      { subject: 'http://ex.org/no-result', reason: 'needs a literal sosa:hasSimpleResult or a sosa:hasResult' },
      { subject: 'http://ex.org/iri-result', reason: 'needs a literal sosa:hasSimpleResult or a sosa:hasResult' },
      { subject: 'http://ex.org/no-unit', reason: quantity },
      { subject: 'http://ex.org/text-value', reason: quantity },
      { subject: 'http://ex.org/dangling', reason: quantity },
    ]);
  });

  it('gives every observation a distinct, IRI-safe local id', () => {
    const { observations } = extract(`
      <http://a.example/readings/obs1> a sosa:Observation; ${about}; sosa:hasSimpleResult 1.
      <http://b.example/other/obs1> a sosa:Observation; ${about}; sosa:hasSimpleResult 2.
      <http://c.example/x#obs1> a sosa:Observation; ${about}; sosa:hasSimpleResult 3.
      <http://d.example/st%C3%A4tion%201/> a sosa:Observation; ${about}; sosa:hasSimpleResult 4.
      [] a sosa:Observation; ${about}; sosa:hasSimpleResult 5.`);
    const ids = observations.map((o) => o.id);
    expect(ids.slice(0, 4)).toEqual(['obs1', 'obs1-2', 'obs1-3', 'st_C3_A4tion_201']);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});
