import { readFileSync } from 'node:fs';
import type { RemoteDocument } from 'jsonld/jsonld-spec.js';
import jsonld from 'jsonld';
import { DataFactory, Parser } from 'n3';
import { describe, expect, it } from 'vitest';
import { formatNames } from '@rdf-stream/protocol';
import { loadBundledContext } from '../../src/model/bundled-context.js';
import { elementQuads } from '../../src/model/observation.js';
import { elementGraphIri, streamIri } from '../../src/model/stream-element.js';
import { formats } from '../../src/render/output-formats.js';
import { JsonLdWriter } from '../../src/render/jsonld-writer.js';
import { renderElement } from '../../src/render/render-element.js';
import { ParkingSimulator } from '../../src/source/parking-simulator.js';
import { goldenElement } from '../support/golden-element.js';
import { expectIsomorphic, parseRdf } from '../support/rdf.js';
import { validateElement } from '../support/shacl.js';

// packages/publisher/test/unit/ → repository root
const ontologies = (path: string) => readFileSync(new URL(`../../../../ontologies/${path}`, import.meta.url), 'utf8');

const CONTEXT_URL = 'http://127.0.0.1:8080/contexts/sosa-stream.jsonld';
const jsonLd = new JsonLdWriter(loadBundledContext().document, CONTEXT_URL);

const SOSA = 'http://www.w3.org/ns/sosa/';
const XSD = 'http://www.w3.org/2001/XMLSchema#';

/** Serves the bundled context for its one URL and nothing else: expansion never goes online. */
function offlineLoader() {
  const requested: string[] = [];
  const documentLoader = async (url: string): Promise<RemoteDocument> => {
    requested.push(url);
    if (url === CONTEXT_URL) {
      return { contextUrl: undefined, documentUrl: url, document: JSON.parse(ontologies('context/sosa-stream.jsonld')) as RemoteDocument['document'] };
    }
    throw new Error(`refusing to load ${url}: only the bundled context is available`);
  };
  return { documentLoader, requested };
}

const sortedLines = (nquads: unknown) => String(nquads).split('\n').filter(Boolean).sort();

describe('ontologies/', () => {
  it('the profile, the shapes and both TriG examples parse', () => {
    const profile = new Parser({ format: 'text/turtle' }).parse(ontologies('sosa-profile.ttl'));
    expect(profile.length).toBeGreaterThan(10);
    expect(
      profile.some(
        (q) =>
          q.subject.value === 'https://w3id.org/rdf-stream/profile/sosa' &&
          q.predicate.value === 'http://www.w3.org/2002/07/owl#imports' &&
          q.object.value === SOSA,
      ),
    ).toBe(true);
    expect(
      profile.some(
        (q) =>
          q.subject.value === 'http://vocab.datex.org/terms#parkingNumberOfVacantSpaces' &&
          q.predicate.value === 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type' &&
          q.object.value === `${SOSA}ObservableProperty`,
      ),
    ).toBe(true);
    expect(new Parser({ format: 'text/turtle' }).parse(ontologies('shapes/stream-element.shacl.ttl')).length).toBeGreaterThan(10);
    for (const example of ['parking-element.trig', 'invalid-element.trig']) {
      const quads = new Parser({ format: 'application/trig' }).parse(ontologies(`examples/${example}`));
      // the timestamp in the default graph, the observations in the element's graph
      const graphs = new Set(quads.map((q) => q.graph.value));
      expect(graphs).toEqual(new Set(['', 'http://127.0.0.1:8080/streams/parking/elements/demo2026ab-42']));
      expect(quads.filter((q) => q.object.value === `${SOSA}Observation`)).toHaveLength(3);
    }
  });

  it.each(formatNames)('the golden %s example is exactly what the renderer writes', (format) => {
    const rendered = renderElement(goldenElement(), jsonLd);
    expect(rendered.bodies[format].toString()).toBe(ontologies(`examples/parking-element.${formats[format].extension}`));
  });

  it('the golden examples hold the same quads in every format', async () => {
    const expected = await parseRdf('nquads', ontologies('examples/parking-element.nq'));
    for (const format of ['trig', 'jsonld'] as const) {
      expectIsomorphic(await parseRdf(format, ontologies(`examples/parking-element.${formats[format].extension}`)), expected);
    }
  });
});

describe('the JSON-LD context', () => {
  it('is JSON-LD 1.1 with exactly the terms and coercions the JSON-LD writer relies on', () => {
    const document = JSON.parse(ontologies('context/sosa-stream.jsonld')) as unknown;
    expect(document).toEqual({
      '@context': {
        '@version': 1.1,
        sosa: 'http://www.w3.org/ns/sosa/',
        ssn: 'http://www.w3.org/ns/ssn/',
        prov: 'http://www.w3.org/ns/prov#',
        xsd: 'http://www.w3.org/2001/XMLSchema#',
        datex: 'http://vocab.datex.org/terms#',
        qudt: 'http://qudt.org/schema/qudt/',
        unit: 'http://qudt.org/vocab/unit/',
        Observation: 'sosa:Observation',
        madeBySensor: { '@id': 'sosa:madeBySensor', '@type': '@id' },
        observedProperty: { '@id': 'sosa:observedProperty', '@type': '@id' },
        hasFeatureOfInterest: { '@id': 'sosa:hasFeatureOfInterest', '@type': '@id' },
        hasResult: { '@id': 'sosa:hasResult', '@type': '@id' },
        hasSimpleResult: { '@id': 'sosa:hasSimpleResult' },
        resultTime: { '@id': 'sosa:resultTime', '@type': 'xsd:dateTime' },
        phenomenonTime: { '@id': 'sosa:phenomenonTime', '@type': 'xsd:dateTime' },
        generatedAtTime: { '@id': 'prov:generatedAtTime', '@type': 'xsd:dateTime' },
        QuantityValue: 'qudt:QuantityValue',
        numericValue: { '@id': 'qudt:numericValue' },
        hasUnit: { '@id': 'qudt:hasUnit', '@type': '@id' },
      },
    });
  });

  it('expands a compacted element to the expected N-Quads, loading only the bundled context', async () => {
    const G = 'http://127.0.0.1:8080/streams/parking/elements/7';
    const { documentLoader, requested } = offlineLoader();
    const nquads = await jsonld.toRDF(
      {
        '@context': CONTEXT_URL,
        '@id': G,
        generatedAtTime: '2026-11-22T16:20:05.123Z',
        '@graph': [
          {
            '@id': `${G}#p01`,
            '@type': 'Observation',
            madeBySensor: 'http://127.0.0.1:8080/streams/parking/sensors/p01',
            observedProperty: 'datex:parkingNumberOfVacantSpaces',
            hasFeatureOfInterest: 'http://127.0.0.1:8080/streams/parking/facilities/p01',
            hasSimpleResult: 123,
            resultTime: '2026-11-22T16:20:05.123Z',
          },
          {
            '@id': `${G}#t01`,
            '@type': 'Observation',
            hasResult: { '@type': 'QuantityValue', numericValue: 21.5, hasUnit: 'unit:DEG_C' },
            phenomenonTime: '2026-11-22T16:20:00Z',
          },
        ],
      },
      { format: 'application/n-quads', documentLoader },
    );
    expect(requested).toEqual([CONTEXT_URL]);
    expect(sortedLines(nquads)).toEqual(
      [
        `<${G}> <http://www.w3.org/ns/prov#generatedAtTime> "2026-11-22T16:20:05.123Z"^^<${XSD}dateTime> .`,
        `<${G}#p01> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${SOSA}Observation> <${G}> .`,
        `<${G}#p01> <${SOSA}madeBySensor> <http://127.0.0.1:8080/streams/parking/sensors/p01> <${G}> .`,
        `<${G}#p01> <${SOSA}observedProperty> <http://vocab.datex.org/terms#parkingNumberOfVacantSpaces> <${G}> .`,
        `<${G}#p01> <${SOSA}hasFeatureOfInterest> <http://127.0.0.1:8080/streams/parking/facilities/p01> <${G}> .`,
        // a JSON number without a fraction becomes xsd:integer (no coercion on hasSimpleResult)
        `<${G}#p01> <${SOSA}hasSimpleResult> "123"^^<${XSD}integer> <${G}> .`,
        `<${G}#p01> <${SOSA}resultTime> "2026-11-22T16:20:05.123Z"^^<${XSD}dateTime> <${G}> .`,
        `<${G}#t01> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${SOSA}Observation> <${G}> .`,
        `<${G}#t01> <${SOSA}hasResult> _:b0 <${G}> .`,
        `<${G}#t01> <${SOSA}phenomenonTime> "2026-11-22T16:20:00Z"^^<${XSD}dateTime> <${G}> .`,
        `_:b0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://qudt.org/schema/qudt/QuantityValue> <${G}> .`,
        // JSON-LD turns a JSON number with a fraction into an xsd:double in canonical form
        `_:b0 <http://qudt.org/schema/qudt/numericValue> "2.15E1"^^<${XSD}double> <${G}> .`,
        `_:b0 <http://qudt.org/schema/qudt/hasUnit> <http://qudt.org/vocab/unit/DEG_C> <${G}> .`,
      ].sort(),
    );
  });

  it('the offline document loader refuses any other context', async () => {
    const { documentLoader, requested } = offlineLoader();
    await expect(
      jsonld.toRDF({ '@context': 'https://schema.org/', '@id': 'http://example.org/x', name: 'x' }, { format: 'application/n-quads', documentLoader }),
    ).rejects.toThrow();
    expect(requested).toEqual(['https://schema.org/']);
  });
});

describe('SHACL shapes (shacl-engine)', () => {
  it('the valid example conforms', async () => {
    const quads = new Parser({ format: 'application/trig' }).parse(ontologies('examples/parking-element.trig'));
    const report = await validateElement(quads);
    expect(report.violations).toEqual([]);
    expect(report.conforms).toBe(true);
  });

  it('the golden element conforms in every format, graphs or not', async () => {
    for (const format of formatNames) {
      const report = await validateElement(await parseRdf(format, ontologies(`examples/parking-element.${formats[format].extension}`)));
      expect(report.violations, format).toEqual([]);
    }
  });

  it('every element the demo stream generates conforms', async () => {
    const base = 'http://127.0.0.1:8080';
    const simulator = new ParkingSimulator({ streamIri: streamIri(base, 'parking'), facilities: 13, intervalMs: 5000, seed: 3 });
    for (let seq = 1; seq <= 20; seq++) {
      const graph = elementGraphIri(base, 'parking', 'e1', seq);
      const report = await validateElement(elementQuads(graph, new Date(), simulator.step()));
      expect(report.violations).toEqual([]);
      expect(report.conforms).toBe(true);
    }
  });

  it('the invalid example (no resultTime, two sensors, two results) does not conform, and the report says why', async () => {
    const quads = new Parser({ format: 'application/trig' }).parse(ontologies('examples/invalid-element.trig'));
    const report = await validateElement(quads);
    expect(report.conforms).toBe(false);
    const paths = report.violations.map((v) => v.path);
    expect(paths).toContain(`${SOSA}resultTime`);
    expect(paths).toContain(`${SOSA}madeBySensor`);
    const byFocus = (id: string) => report.violations.filter((v) => v.focusNode.endsWith(`#${id}`));
    expect(byFocus('p01')).toEqual([
      { focusNode: expect.stringMatching(/#p01$/), path: `${SOSA}resultTime`, message: expect.stringMatching(/resultTime/) },
    ]);
    expect(byFocus('p02')).toEqual([
      { focusNode: expect.stringMatching(/#p02$/), path: `${SOSA}madeBySensor`, message: expect.stringMatching(/madeBySensor/) },
    ]);
    expect(byFocus('p03')).toEqual([
      { focusNode: expect.stringMatching(/#p03$/), path: undefined, message: expect.stringMatching(/either sosa:hasSimpleResult or sosa:hasResult/) },
    ]);
  });

  it('an element whose timestamp is not an xsd:dateTime does not conform', async () => {
    const { quads } = goldenElement();
    const untyped = quads.map((q) =>
      q.predicate.value.endsWith('generatedAtTime') ? DataFactory.quad(q.subject, q.predicate, DataFactory.literal(q.object.value)) : q,
    );
    const report = await validateElement(untyped);
    expect(report.conforms).toBe(false);
    expect(report.violations.map((v) => v.path)).toEqual(['http://www.w3.org/ns/prov#generatedAtTime']);
  });

  it('an element whose graph name is a blank node does not conform', async () => {
    const { quads } = goldenElement();
    const graph = DataFactory.blankNode('g');
    const anonymous = quads.map((q) => (q.predicate.value.endsWith('generatedAtTime') ? DataFactory.quad(graph, q.predicate, q.object) : q));
    const report = await validateElement(anonymous);
    expect(report.conforms).toBe(false);
    expect(report.violations).toEqual([{ focusNode: 'g', path: undefined, message: "An element's graph name must be an IRI." }]);
  });
});
