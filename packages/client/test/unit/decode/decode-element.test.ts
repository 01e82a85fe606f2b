import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FormatName } from '@rdf-stream/protocol';
import { DecodeError, decodeElement } from '../../../src/decode/decode-element.js';

const example = (extension: string) =>
  readFileSync(new URL(`../../../../../ontologies/examples/parking-element.${extension}`, import.meta.url), 'utf8');
const extensions: Record<FormatName, string> = { turtle: 'ttl', trig: 'trig', ntriples: 'nt', nquads: 'nq', jsonld: 'jsonld' };

describe('decodeElement', () => {
  it.each(Object.keys(extensions) as FormatName[])('decodes the golden %s example with its timestamp and sequence number', async (format) => {
    const decoded = await decodeElement(example(extensions[format]), format);
    expect(decoded.graph).toBe('http://127.0.0.1:8080/streams/parking/elements/demo2026ab-42');
    expect(decoded.seq).toBe(42);
    expect(decoded.generatedAt?.toISOString()).toBe('2026-11-22T16:20:05.123Z');
    expect(decoded.quads).toHaveLength(19);
  });

  it('refuses a JSON-LD document that names a remote context, without any connection', async () => {
    const document = JSON.stringify({ '@context': 'https://example.org/context.jsonld', '@id': 'http://x/s', 'http://x/p': 1 });
    await expect(decodeElement(document, 'jsonld')).rejects.toThrow(/refusing to load remote JSON-LD document https:\/\/example.org/);
  });

  it('reports invalid RDF as a DecodeError naming the format', async () => {
    await expect(decodeElement('<a> <b> .', 'turtle')).rejects.toThrow(DecodeError);
    await expect(decodeElement('{not json', 'jsonld')).rejects.toThrow(/invalid jsonld/);
  });
});
