import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CONTEXT_PATH,
  EPOCH,
  EVENT_STREAM_MEDIA_TYPE,
  elementId,
  exposedHeaders,
  formatNames,
  formatOfContentType,
  gapEventData,
  gapReasons,
  opaqueTag,
  idSyntax,
  isFormatName,
  mediaTypeIri,
  mediaTypes,
  parseElementId,
  parseGapEventData,
  preferWait,
  STREAM_GAP_HEADER,
  STREAM_ID,
  sseEvents,
  streamTerms,
  streamGapHeaderValue,
} from '../../src/index.js';

describe('formats', () => {
  it('names five RDF formats, Turtle first, each with its media type (docs/protocol.md)', () => {
    expect(formatNames).toEqual(['turtle', 'trig', 'ntriples', 'nquads', 'jsonld']);
    expect(formatNames.map((format) => mediaTypes[format])).toEqual([
      'text/turtle',
      'application/trig',
      'application/n-triples',
      'application/n-quads',
      'application/ld+json',
    ]);
    expect(Object.isFrozen(mediaTypes) && Object.isFrozen(formatNames)).toBe(true);
  });

  it('tells a format name from anything else, inherited properties included', () => {
    expect(formatNames.every(isFormatName)).toBe(true);
    expect(['Turtle', 'json', 'toString', 'constructor', '', undefined, 1].some(isFormatName)).toBe(false);
  });

  it.each([
    ['text/turtle', 'turtle'],
    ['text/turtle; charset=utf-8', 'turtle'],
    ['Application/N-Quads ; charset=UTF-8', 'nquads'],
    ['application/ld+json; profile="http://www.w3.org/ns/json-ld#compacted"', 'jsonld'],
    ['application/json', 'jsonld'],
    ['text/html', undefined],
    ['', undefined],
    [null, undefined],
    [undefined, undefined],
  ])('reads the format of Content-Type %j as %s', (contentType, format) => {
    expect(formatOfContentType(contentType)).toBe(format);
  });

  it('names media types by their IANA IRI, as dcat:mediaType does', () => {
    expect(mediaTypeIri(EVENT_STREAM_MEDIA_TYPE)).toBe('https://www.iana.org/assignments/media-types/text/event-stream');
    expect(mediaTypeIri(mediaTypes.turtle)).toBe('https://www.iana.org/assignments/media-types/text/turtle');
  });

  it('places an element by prov:generatedAtTime and rdf-stream:sequenceNumber', () => {
    expect(streamTerms).toEqual({
      generatedAtTime: 'http://www.w3.org/ns/prov#generatedAtTime',
      sequenceNumber: 'https://w3id.org/rdf-stream/vocab#sequenceNumber',
    });
  });

  it('serves its JSON-LD context at one path', () => {
    expect(CONTEXT_PATH).toBe('/contexts/sosa-stream.jsonld');
  });
});

describe('stream ids', () => {
  it.each(['parking', 'a', '0', 'smart-city-2', 'a'.repeat(64)])('accepts %s', (id) => {
    expect(STREAM_ID.test(id)).toBe(true);
  });

  it.each(['', '-parking', 'Parking', 'park_ing', 'park ing', 'a'.repeat(65), 'parking/latest'])('refuses %j', (id) => {
    expect(STREAM_ID.test(id)).toBe(false);
  });

  it('is the pattern the configuration schema states', () => {
    expect(STREAM_ID.source).toBe('^[a-z0-9][a-z0-9-]{0,63}$');
    expect(new RegExp(`^/streams/(${idSyntax.stream})/latest$`).exec('/streams/parking/latest')?.[1]).toBe('parking');
  });
});

describe('element ids', () => {
  it('writes {epoch}-{seq} and reads it back', () => {
    expect(elementId('k3x9a2b7q1', 42)).toBe('k3x9a2b7q1-42');
    expect(parseElementId(elementId('k3x9a2b7q1', 42))).toEqual({ epoch: 'k3x9a2b7q1', seq: 42 });
    expect(parseElementId(`${'z'.repeat(32)}-${Number.MAX_SAFE_INTEGER}`)).toEqual({ epoch: 'z'.repeat(32), seq: Number.MAX_SAFE_INTEGER });
  });

  it.each([
    ['a bare number', '42'],
    ['sequence number 0', 'k3x9a2b7q1-0'],
    ['a leading zero', 'k3x9a2b7q1-042'],
    ['an upper-case epoch', 'K3X9-1'],
    ['an epoch of 33 characters', `${'a'.repeat(33)}-1`],
    ['a dash in the epoch', 'k3x9-a2b7-1'],
    ['a sequence number beyond 2^53', 'k3x9a2b7q1-9999999999999999'],
    ['whitespace', ' k3x9a2b7q1-1'],
    ['nothing', ''],
  ])('refuses %s', (_case, value) => {
    expect(parseElementId(value)).toBeUndefined();
  });

  it('knows an epoch: [a-z0-9], 1 to 32 characters', () => {
    expect(EPOCH.test('k3x9a2b7q1')).toBe(true);
    expect(['', 'k3x9-a2b7', 'a'.repeat(33), 'K3X9'].some((epoch) => EPOCH.test(epoch))).toBe(false);
  });
});

describe('the gap of a resumed stream', () => {
  const gap = { requestedId: 'k3x9a2b7q1-5', oldestRetained: 'k3x9a2b7q1-120', reason: 'expired' } as const;

  it('is the event data and the header docs/protocol.md shows', () => {
    expect(gapEventData(gap)).toBe('{"requestedId":"k3x9a2b7q1-5","oldestRetained":"k3x9a2b7q1-120","reason":"expired"}');
    expect(`${STREAM_GAP_HEADER}: ${streamGapHeaderValue(gap)}`).toBe('Stream-Gap: expired; requested=k3x9a2b7q1-5; oldest=k3x9a2b7q1-120');
  });

  it.each(gapReasons)('reads back what it writes, reason %s', (reason) => {
    expect(parseGapEventData(gapEventData({ ...gap, reason }))).toEqual({ ...gap, reason });
  });

  it.each([
    ['a body that is not JSON', '{"requestedId":', { requestedId: undefined, oldestRetained: undefined, reason: 'unknown' }],
    ['JSON that is not an object', 'null', { requestedId: undefined, oldestRetained: undefined, reason: 'unknown' }],
    ['ids that are not strings', '{"requestedId":5,"oldestRetained":["a-1"],"reason":"epoch"}', { requestedId: undefined, oldestRetained: undefined, reason: 'epoch' }],
    ['a reason of a later version', '{"requestedId":"a-1","oldestRetained":"a-9","reason":"compacted"}', { requestedId: 'a-1', oldestRetained: 'a-9', reason: 'unknown' }],
  ])('trusts nothing in %s', (_case, data, read) => {
    expect(parseGapEventData(data)).toEqual(read);
  });
});

describe('SSE, long-polling and CORS', () => {
  it('names the events a stream sends besides elements', () => {
    expect(sseEvents).toEqual({ gap: 'gap', shed: 'shed' });
    expect(EVENT_STREAM_MEDIA_TYPE).toBe('text/event-stream');
  });

  it('asks a long-poll to wait with Prefer: wait=N', () => {
    expect(preferWait(30)).toBe('wait=30');
  });

  it('exposes every header a client reads, each once', () => {
    expect(exposedHeaders).toEqual(expect.arrayContaining(['ETag', 'Expires', 'Last-Modified', 'Retry-After', 'Stream-Gap', 'Location', 'Accept-Post']));
    expect(new Set(exposedHeaders.map((name) => name.toLowerCase())).size).toBe(exposedHeaders.length);
  });
});

describe('the module', () => {
  it('imports nothing, so that Node and browsers load it alike', () => {
    const source = readFileSync(new URL('../../src/index.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/^\s*import\b/m);
    expect(source).not.toMatch(/\bfrom\s*['"]|\bimport\s*\(|\brequire\s*\(/);
  });
});

describe('opaqueTag', () => {
  it('drops the weakness indicator and the spaces around a tag, and nothing else (RFC 9110 §8.8.3.2)', () => {
    expect(opaqueTag('W/"e1"')).toBe('"e1"');
    expect(opaqueTag(' "e1" ')).toBe('"e1"');
    expect(opaqueTag(' W/"W/e1"')).toBe('"W/e1"');
    expect(opaqueTag('w/"e1"')).toBe('w/"e1"');
  });
});
