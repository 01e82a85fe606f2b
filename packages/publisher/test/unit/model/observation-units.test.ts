import { describe, expect, it } from 'vitest';
import { formatNames } from '@rdf-stream/protocol';
import { loadBundledContext } from '../../../src/model/bundled-context.js';
import { elementQuads, type Observation } from '../../../src/model/observation.js';
import { elementGraphIri } from '../../../src/model/stream-element.js';
import { JsonLdWriter } from '../../../src/render/jsonld-writer.js';
import { renderElement } from '../../../src/render/render-element.js';
import { expectIsomorphic, flatten, parseRdf } from '../../support/rdf.js';
import { validateElement } from '../../support/shacl.js';

const CONTEXT_URL = 'http://127.0.0.1:8080/contexts/sosa-stream.jsonld';
const jsonLd = new JsonLdWriter(loadBundledContext().document, CONTEXT_URL);

const SOSA = 'http://www.w3.org/ns/sosa/';
const QUDT = 'http://qudt.org/schema/qudt/';
const UNIT = 'http://qudt.org/vocab/unit/';
const station = 'https://data.example.org/air-quality/stations/harbour-road';

const graph = elementGraphIri('http://127.0.0.1:8080', 'air-quality', 'e1', 7);
const generatedAt = new Date('2026-03-14T08:01:00.125Z');
/** As a replay sends them: results with units, the recorded time kept as phenomenonTime. */
const observations: Observation[] = [
  {
    id: 'no2',
    sensor: 'https://data.example.org/air-quality/sensors/harbour-road-no2',
    observedProperty: 'http://dd.eionet.europa.eu/vocabulary/aq/pollutant/8',
    featureOfInterest: station,
    simpleResult: 44.2,
    unit: `${UNIT}MicroGM-PER-M3`,
    phenomenonTime: new Date('2026-03-14T08:00:50Z'),
  },
  {
    id: 'temperature',
    sensor: 'https://data.example.org/air-quality/sensors/harbour-road-temperature',
    observedProperty: 'http://vocab.nerc.ac.uk/standard_name/air_temperature/',
    featureOfInterest: station,
    simpleResult: -3,
    unit: `${UNIT}DEG_C`,
    resultTime: new Date('2026-03-14T08:00:55Z'),
    phenomenonTime: new Date('2026-03-14T08:00:50Z'),
  },
  {
    id: 'vehicles',
    sensor: 'https://data.example.org/traffic/counters/ring-road-north',
    observedProperty: 'https://data.example.org/traffic/properties/vehicleCount',
    featureOfInterest: 'https://data.example.org/traffic/road-segments/ring-road-north',
    simpleResult: 12,
    phenomenonTime: new Date('2026-03-14T07:45:00Z'),
  },
];
const quads = elementQuads(graph, generatedAt, observations);
const element = { streamId: 'air-quality', epoch: 'e1', seq: 7, graph, generatedAt, quads };

describe('an element of observations with units and phenomenon times', () => {
  it('writes each unit as a QUDT quantity value and keeps both times', () => {
    const objectsOf = (subject: string, predicate: string) =>
      quads.filter((q) => q.subject.value === subject && q.predicate.value === predicate).map((q) => q.object);
    const [result] = objectsOf(`${graph}#no2`, `${SOSA}hasResult`);
    expect(result?.value).toBe(`${graph}#no2-result`);
    expect(objectsOf(result!.value, `${QUDT}numericValue`).map((o) => o.value)).toEqual(['44.2']);
    expect(objectsOf(result!.value, `${QUDT}hasUnit`).map((o) => o.value)).toEqual([`${UNIT}MicroGM-PER-M3`]);
    // without its own resultTime an observation takes the element's time
    expect(objectsOf(`${graph}#no2`, `${SOSA}resultTime`).map((o) => o.value)).toEqual(['2026-03-14T08:01:00.125Z']);
    expect(objectsOf(`${graph}#temperature`, `${SOSA}resultTime`).map((o) => o.value)).toEqual(['2026-03-14T08:00:55.000Z']);
    expect(objectsOf(`${graph}#temperature`, `${SOSA}phenomenonTime`).map((o) => o.value)).toEqual(['2026-03-14T08:00:50.000Z']);
  });

  it('conforms to the SHACL shapes', async () => {
    const report = await validateElement(quads);
    expect(report.violations).toEqual([]);
    expect(report.conforms).toBe(true);
  });

  it('its JSON-LD expands back to the same quads, and every other format parses back to them', async () => {
    const rendered = renderElement(element, jsonLd);
    expectIsomorphic(await parseRdf('jsonld', rendered.documents.jsonld.toString()), quads);
    for (const format of formatNames) {
      const parsed = await parseRdf(format, rendered.documents[format].toString());
      const expected = format === 'turtle' || format === 'ntriples' ? flatten(quads) : quads;
      expectIsomorphic(parsed, expected);
    }
  });
});
