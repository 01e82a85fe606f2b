import { readFileSync } from 'node:fs';
import jsonld from 'jsonld';
import { DataFactory, Parser } from 'n3';
import { describe, expect, it } from 'vitest';
import { loadBundledContext } from '../../src/model/bundled-context.js';
import { elementQuads } from '../../src/model/observation.js';
import { elementGraphIri, streamIri } from '../../src/model/stream-element.js';
import { formatNames, formats } from '../../src/render/formats.js';
import { JsonLdWriter } from '../../src/render/jsonld-writer.js';
import { renderElement } from '../../src/render/render-element.js';
import { ParkingSimulator } from '../../src/source/parking-simulator.js';
import { goldenElement } from '../support/golden-element.js';
import { bundledDocumentLoader, expectIsomorphic, parseRdf } from '../support/rdf.js';
import { validateElement } from '../support/shacl.js';

const ontologies = (path: string) => readFileSync(new URL(`../../../../ontologies/${path}`, import.meta.url), 'utf8');
const jsonLd = new JsonLdWriter(loadBundledContext().document, 'http://127.0.0.1:8080/contexts/sosa-stream.jsonld');

describe('ontologies/', () => {
  it('the profile, the shapes and the examples parse', () => {
    expect(new Parser().parse(ontologies('sosa-profile.ttl')).length).toBeGreaterThan(10);
    expect(new Parser().parse(ontologies('shapes/stream-element.shacl.ttl')).length).toBeGreaterThan(10);
    expect(new Parser({ format: 'application/trig' }).parse(ontologies('examples/invalid-element.trig')).length).toBeGreaterThan(10);
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

  it('the JSON-LD context expands our terms with their coercions, offline', async () => {
    const expanded = await jsonld.toRDF(
      {
        '@context': 'http://127.0.0.1:8080/contexts/sosa-stream.jsonld',
        '@id': 'http://example.org/o',
        '@type': 'Observation',
        madeBySensor: 'http://example.org/s',
        resultTime: '2026-11-22T16:20:05.123Z',
        hasSimpleResult: 3,
      },
      { format: 'application/n-quads', documentLoader: bundledDocumentLoader as never },
    );
    expect(String(expanded).split('\n').filter(Boolean).sort()).toEqual([
      '<http://example.org/o> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://www.w3.org/ns/sosa/Observation> .',
      '<http://example.org/o> <http://www.w3.org/ns/sosa/hasSimpleResult> "3"^^<http://www.w3.org/2001/XMLSchema#integer> .',
      '<http://example.org/o> <http://www.w3.org/ns/sosa/madeBySensor> <http://example.org/s> .',
      '<http://example.org/o> <http://www.w3.org/ns/sosa/resultTime> "2026-11-22T16:20:05.123Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .',
    ]);
  });
});

describe('SHACL shapes (shacl-engine)', () => {
  it('every element the demo stream generates conforms', async () => {
    const base = 'http://127.0.0.1:8080';
    const simulator = new ParkingSimulator({ streamIri: streamIri(base, 'parking'), facilities: 13, intervalMs: 5000, seed: 3 });
    for (let seq = 1; seq <= 20; seq++) {
      const graph = elementGraphIri(base, 'parking', seq);
      const report = await validateElement(elementQuads(graph, new Date(), simulator.step()));
      expect(report.violations).toEqual([]);
      expect(report.conforms).toBe(true);
    }
  });

  it('an element with a missing resultTime, two sensors and two results does not conform, and the report says why', async () => {
    const quads = new Parser({ format: 'application/trig' }).parse(ontologies('examples/invalid-element.trig'));
    const report = await validateElement(quads);
    expect(report.conforms).toBe(false);
    const byFocus = (id: string) => report.violations.filter((v) => v.focusNode?.endsWith(`#${id}`));
    expect(byFocus('p01').map((v) => v.path)).toContain('http://www.w3.org/ns/sosa/resultTime');
    expect(byFocus('p02').map((v) => v.path)).toContain('http://www.w3.org/ns/sosa/madeBySensor');
    expect(byFocus('p03').map((v) => v.message).join(' ')).toMatch(/either sosa:hasSimpleResult or sosa:hasResult/);
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
});
