import type { Quad } from '@rdfjs/types';
import { DataFactory } from 'n3';
import { describe, expect, it } from 'vitest';
import { resourceTerms, streamResources } from '@rdf-stream/protocol';
import { elementQuads } from '../../../src/model/observation.js';
import { describeMentionedResources, isMintedResource } from '../../../src/model/resource-description.js';

const { namedNode, literal, quad } = DataFactory;

const stream = 'http://127.0.0.1:8080/streams/air';
const minted = streamResources(stream);
const graph = `${stream}/elements/e1-7`;
const generatedAt = new Date('2026-11-22T16:20:05.123Z');
const SOSA = 'http://www.w3.org/ns/sosa/';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const RDFS_LABEL = 'http://www.w3.org/2000/01/rdf-schema#label';

/** The element's triples as its Turtle document carries them: one graph. */
const asTriples = (quads: readonly Quad[]) => quads.map((q) => quad(q.subject, q.predicate, q.object));

const element = (extra: Quad[] = []) => ({
  graph,
  generatedAt,
  triples: [
    ...asTriples(
      elementQuads(graph, generatedAt, [
        { id: 'no2', sensor: minted.sensor('s1'), observedProperty: 'http://example.org/NO2', featureOfInterest: minted.featureOfInterest('f1'), simpleResult: 41 },
        { id: 't', sensor: minted.sensor('s1'), observedProperty: 'http://example.org/T', featureOfInterest: minted.featureOfInterest('f2'), simpleResult: 7.5, unit: 'http://qudt.org/vocab/unit/DEG_C' },
        { id: 'ext', sensor: 'https://elsewhere.example/sensors/9', observedProperty: 'http://example.org/T', featureOfInterest: minted.featureOfInterest('f2'), simpleResult: 8 },
      ]),
    ),
    ...extra,
  ],
});

const has = (quads: readonly Quad[], s: string, p: string, o: string) => quads.some((q) => q.subject.value === s && q.predicate.value === p && q.object.value === o);

describe('describeMentionedResources', () => {
  it('describes each minted sensor and feature of interest by its role, with the stream and the element it was last mentioned in', () => {
    const described = describeMentionedResources(stream, element());
    expect([...described.keys()].sort()).toEqual([minted.featureOfInterest('f1'), minted.featureOfInterest('f2'), minted.sensor('s1')]);
    const sensor = described.get(minted.sensor('s1'))!;
    expect(has(sensor, minted.sensor('s1'), RDF_TYPE, `${SOSA}Sensor`)).toBe(true);
    expect(has(sensor, minted.sensor('s1'), resourceTerms.stream, stream)).toBe(true);
    expect(has(sensor, minted.sensor('s1'), resourceTerms.latestElement, graph)).toBe(true);
    expect(has(sensor, graph, 'http://www.w3.org/ns/prov#generatedAtTime', generatedAt.toISOString())).toBe(true);
    const feature = described.get(minted.featureOfInterest('f2'))!;
    expect(has(feature, minted.featureOfInterest('f2'), RDF_TYPE, `${SOSA}FeatureOfInterest`)).toBe(true);
  });

  it("links a resource to each of its observations, quoting the element's triples, result nodes included, and no one else's", () => {
    const sensor = describeMentionedResources(stream, element()).get(minted.sensor('s1'))!;
    expect(has(sensor, minted.sensor('s1'), `${SOSA}madeObservation`, `${graph}#no2`)).toBe(true);
    expect(has(sensor, minted.sensor('s1'), `${SOSA}madeObservation`, `${graph}#t`)).toBe(true);
    expect(has(sensor, `${graph}#no2`, `${SOSA}hasSimpleResult`, '41')).toBe(true);
    expect(has(sensor, `${graph}#t-result`, 'http://qudt.org/schema/qudt/numericValue', '7.5')).toBe(true);
    expect(sensor.some((q) => q.subject.value === `${graph}#ext`)).toBe(false);
    const feature = describeMentionedResources(stream, element()).get(minted.featureOfInterest('f2'))!;
    expect(has(feature, minted.featureOfInterest('f2'), `${SOSA}isFeatureOfInterestOf`, `${graph}#ext`)).toBe(true);
    expect(feature.some((q) => q.subject.value === `${graph}#no2`)).toBe(false);
  });

  it("carries what the element says of the resource itself (its label), written first, each triple once", () => {
    const label = quad(namedNode(minted.sensor('s1')), namedNode(RDFS_LABEL), literal('Roof station', 'en'));
    const sensor = describeMentionedResources(stream, element([label])).get(minted.sensor('s1'))!;
    expect(has(sensor, minted.sensor('s1'), RDFS_LABEL, 'Roof station')).toBe(true);
    const firstOther = sensor.findIndex((q) => q.subject.value !== minted.sensor('s1'));
    expect(sensor.slice(firstOther).every((q) => q.subject.value !== minted.sensor('s1'))).toBe(true);
    const keys = sensor.map((q) => `${q.subject.value} ${q.predicate.value} ${q.object.value}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('describes nothing that is not minted below the stream: other streams, other paths, deeper paths', () => {
    expect(isMintedResource(stream, minted.sensor('s1'))).toBe(true);
    expect(isMintedResource(stream, minted.featureOfInterest('f%20g'))).toBe(true);
    for (const iri of [
      'http://127.0.0.1:8080/streams/other/sensors/s1',
      `${stream}/elements/e1-7`,
      `${stream}/sensors/`,
      `${stream}/sensors/a/b`,
      `${stream}/sensors/a#b`,
      `${stream}/sensorsx/a`,
    ]) {
      expect(isMintedResource(stream, iri), iri).toBe(false);
    }
  });
});
