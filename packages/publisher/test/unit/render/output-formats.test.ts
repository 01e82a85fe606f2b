import { formatNames, mediaTypes } from '@rdf-stream/protocol';
import { DataFactory, Parser, Writer } from 'n3';
import { describe, expect, it } from 'vitest';
import { contentType, formats } from '../../../src/render/output-formats.js';

const { quad, namedNode, literal, defaultGraph } = DataFactory;
const n3FormatNames = formatNames.filter((format) => format !== 'jsonld') as Array<Exclude<(typeof formatNames)[number], 'jsonld'>>;

describe('formats', () => {
  it('has an entry for each format of the protocol, in its order, and cannot be changed', () => {
    expect(Object.keys(formats)).toEqual([...formatNames]);
    expect(Object.isFrozen(formats)).toBe(true);
  });

  it('writes each format under the protocol\'s media type for it', () => {
    for (const format of formatNames) expect(formats[format].mediaType, format).toBe(mediaTypes[format]);
  });

  it('names for each n3 format a writer format whose output a parser of that media type reads back', () => {
    const triple = quad(namedNode('https://example.org/s'), namedNode('https://example.org/p'), literal('o "quoted"'), defaultGraph());
    for (const format of n3FormatNames) {
      let written = '';
      const writer = new Writer({ format: formats[format].n3Format });
      writer.addQuad(triple);
      writer.end((error, result) => {
        if (error) throw error;
        written = result;
      });
      const [read] = new Parser({ format: formats[format].mediaType }).parse(written);
      expect(read?.equals(triple), format).toBe(true);
    }
    expect(formats.jsonld.n3Format).toBeUndefined();
  });

  it('says which formats keep named graphs: a parser of the format accepts a graph exactly when `graphs` is set', () => {
    const inGraph: Record<(typeof n3FormatNames)[number], string> = {
      turtle: '<https://example.org/g> { <https://example.org/s> <https://example.org/p> "o" . }',
      trig: '<https://example.org/g> { <https://example.org/s> <https://example.org/p> "o" . }',
      ntriples: '<https://example.org/s> <https://example.org/p> "o" <https://example.org/g> .',
      nquads: '<https://example.org/s> <https://example.org/p> "o" <https://example.org/g> .',
    };
    for (const format of n3FormatNames) {
      const parse = () => new Parser({ format: formats[format].mediaType }).parse(inGraph[format]);
      if (formats[format].graphs) expect(parse()[0]?.graph.value, format).toBe('https://example.org/g');
      else expect(parse, format).toThrow();
    }
    expect(formats.jsonld.graphs).toBe(true);
  });

  it('gives each format its usual file extension', () => {
    expect(Object.fromEntries(formatNames.map((format) => [format, formats[format].extension]))).toEqual({
      turtle: 'ttl',
      trig: 'trig',
      ntriples: 'nt',
      nquads: 'nq',
      jsonld: 'jsonld',
    });
  });
});

describe('contentType', () => {
  it('declares UTF-8 for every textual RDF format', () => {
    expect(contentType('turtle')).toBe('text/turtle; charset=utf-8');
    expect(contentType('trig')).toBe('application/trig; charset=utf-8');
    expect(contentType('ntriples')).toBe('application/n-triples; charset=utf-8');
    expect(contentType('nquads')).toBe('application/n-quads; charset=utf-8');
  });

  it('gives JSON-LD no charset parameter (JSON is UTF-8 by definition; its media type defines none)', () => {
    expect(contentType('jsonld')).toBe('application/ld+json');
  });
});
