import type { Quad } from '@rdfjs/types';
import { DataFactory } from 'n3';
import { describe, expect, it } from 'vitest';
import { formatNames } from '@rdf-stream/protocol';
import { loadBundledContext } from '../../../src/model/bundled-context.js';
import { elementQuads } from '../../../src/model/observation.js';
import { JsonLdWriter } from '../../../src/render/jsonld-writer.js';
import { renderElement } from '../../../src/render/render-element.js';
import { elementSseFrame } from '../../../src/render/sse-frame.js';
import { sampleObservations } from '../../../src/testing/sample-observations.js';
import { expectIsomorphic, flatten, parseRdf, refusedContextUrls } from '../../support/rdf.js';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

const { namedNode, literal, blankNode, quad, defaultGraph } = DataFactory;
const base = 'http://127.0.0.1:8080';
const stream = `${base}/streams/parking`;
const jsonLd = new JsonLdWriter(loadBundledContext().document, `${base}/contexts/sosa-stream.jsonld`);

const graph = `${stream}/elements/7`;
const generatedAt = new Date('2026-11-22T16:20:05.123Z');
const element = { streamId: 'parking', epoch: 'e1', seq: 7, graph, generatedAt, quads: elementQuads(graph, generatedAt, sampleObservations(stream, [0, 41, 250])) };

function sseData(frame: Buffer): EventSourceMessage[] {
  const events: EventSourceMessage[] = [];
  createParser({ onEvent: (event) => events.push(event) }).feed(frame.toString());
  return events;
}

describe('renderElement', () => {
  const rendered = renderElement(element, jsonLd);

  it.each(formatNames)('%s body parses back to the element quads', async (format) => {
    const parsed = await parseRdf(format, rendered.documents[format].toString());
    const graphs = format === 'trig' || format === 'nquads' || format === 'jsonld';
    expectIsomorphic(parsed, graphs ? element.quads : flatten(element.quads));
  });

  it.each(formatNames)('%s SSE frame, made from the document, carries it under id = {epoch}-{seq}', async (format) => {
    const events = sseData(elementSseFrame(rendered, format));
    expect(events).toHaveLength(1);
    expect(events[0]?.id).toBe('e1-7');
    const parsed = await parseRdf(format, events[0]!.data);
    const graphs = format === 'trig' || format === 'nquads' || format === 'jsonld';
    expectIsomorphic(parsed, graphs ? element.quads : flatten(element.quads));
  });

  it('JSON-LD is compact: context by reference, terms for our vocabulary, one line', () => {
    const text = rendered.documents.jsonld.toString();
    expect(text).not.toContain('\n');
    const document = JSON.parse(text);
    expect(document['@context']).toBe(`${base}/contexts/sosa-stream.jsonld`);
    expect(document['@id']).toBe(graph);
    expect(document.generatedAtTime).toBe('2026-11-22T16:20:05.123Z');
    expect(document['@graph'][1]).toEqual({
      '@id': `${graph}#p2`,
      '@type': 'Observation',
      madeBySensor: `${stream}/sensors/p2`,
      observedProperty: 'http://vocab.datex.org/terms#parkingNumberOfVacantSpaces',
      hasFeatureOfInterest: `${stream}/facilities/p2`,
      hasSimpleResult: 41,
      resultTime: '2026-11-22T16:20:05.123Z',
    });
    expect(refusedContextUrls).toEqual([]);
  });

  it('Turtle uses prefixes and the default graph', () => {
    const text = rendered.documents.turtle.toString();
    expect(text).toContain('@prefix sosa: <http://www.w3.org/ns/sosa/>.');
    expect(text).toContain(`<${graph}> prov:generatedAtTime "2026-11-22T16:20:05.123Z"^^xsd:dateTime.`);
  });
});

describe('JsonLdWriter on quads outside our fixed shape', () => {
  const s = namedNode('http://example.org/s');
  const g = namedNode('http://example.org/g');
  const sosa = (local: string) => namedNode(`http://www.w3.org/ns/sosa/${local}`);
  const xsd = (local: string) => namedNode(`http://www.w3.org/2001/XMLSchema#${local}`);
  const cases: Array<[string, Quad[]]> = [
    // jsonld.js rewrites every xsd:double to its canonical form on reading, so the test uses one.
    ['a decimal and a double result', [quad(s, sosa('hasSimpleResult'), literal('1.50', xsd('decimal'))), quad(s, sosa('hasSimpleResult'), literal('1.0E3', xsd('double')))]],
    ['a non-canonical or huge integer', [quad(s, sosa('hasSimpleResult'), literal('007', xsd('integer'))), quad(s, sosa('hasSimpleResult'), literal('123456789012345678901', xsd('integer')))]],
    ['strings, language tags and booleans', [quad(s, sosa('hasSimpleResult'), literal('full')), quad(s, sosa('hasSimpleResult'), literal('vol', 'nl')), quad(s, sosa('hasSimpleResult'), literal('true', xsd('boolean')))]],
    ['a resultTime that is not an xsd:dateTime', [quad(s, sosa('resultTime'), literal('2026-11-22', xsd('date'))), quad(s, sosa('resultTime'), literal('now'))]],
    ['an IRI-coerced property with a literal value', [quad(s, sosa('madeBySensor'), literal('sensor 1'))]],
    ['blank nodes and hasResult', [quad(s, sosa('hasResult'), blankNode('r1')), quad(blankNode('r1'), namedNode('http://qudt.org/schema/qudt/numericValue'), literal('3.2', xsd('decimal')))]],
    ['properties and classes outside the context', [quad(s, namedNode('http://example.org/p'), namedNode('http://example.org/o')), quad(s, namedNode('http://www.w3.org/1999/02/22-rdf-syntax-ns#type'), namedNode('http://example.org/C'))]],
    ['several named graphs and default-graph triples', [quad(s, sosa('hasSimpleResult'), literal('1', xsd('integer')), g), quad(s, sosa('hasSimpleResult'), literal('2', xsd('integer')), namedNode('http://example.org/g2')), quad(g, namedNode('http://example.org/p'), literal('x'), defaultGraph())]],
    ['strings with quotes, newlines and unicode', [quad(s, sosa('hasSimpleResult'), literal('a "quoted"\nline \u2028 é'))]],
  ];

  it.each(cases)('%s round-trips through jsonld.js', async (_name, quads) => {
    const parsed = await parseRdf('jsonld', jsonLd.write(quads));
    expectIsomorphic(parsed, quads);
  });
});
