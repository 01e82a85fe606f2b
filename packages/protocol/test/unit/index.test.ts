import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  catalogueTerms,
  BROWSER_CLIENT_PATH,
  CONTEXT_PATH,
  EPOCH,
  EVENT_STREAM_MEDIA_TYPE,
  elementId,
  elementIdOfIri,
  exposedHeaders,
  formatNames,
  formatOfContentType,
  gapEventData,
  gapReasons,
  opaqueTag,
  idSyntax,
  isFormatName,
  mediaTypeIri,
  matchStreamPath,
  mediaTypes,
  namespaces,
  observationTerms,
  parseElementId,
  parseEventId,
  parseGapEventData,
  preferWait,
  STREAM_GAP_HEADER,
  STREAM_ID,
  solidNotifications,
  sosaStreamContext,
  sseEvents,
  STREAMS_PATH,
  streamIri,
  streamPath,
  streamPathPattern,
  streamResources,
  streamResourceSegments,
  streamTerms,
  streamGapHeaderValue,
  ontologyIris,
  ontologyPath,
  RDF_STREAM_IRI_BASE,
  resourceTerms,
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
      timeIndex: 'https://w3id.org/rdf-stream/vocab#timeIndex',
    });
  });

  it('serves its JSON-LD context at one path', () => {
    expect(CONTEXT_PATH).toBe('/contexts/sosa-stream.jsonld');
  });

  it('serves the client for pages at one path, a module file name', () => {
    expect(BROWSER_CLIENT_PATH).toBe('/client/rdf-stream-live.js');
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

describe('event ids (what a subscriber sends back)', () => {
  it('reads an element id with its epoch, a bare number of an older publisher without one', () => {
    expect(parseEventId('k3x9a2b7q1-42')).toEqual({ epoch: 'k3x9a2b7q1', seq: 42 });
    expect(parseEventId('42')).toEqual({ epoch: undefined, seq: 42 });
    expect(parseEventId('0')).toEqual({ epoch: undefined, seq: 0 });
    expect(parseEventId(String(Number.MAX_SAFE_INTEGER))).toEqual({ epoch: undefined, seq: Number.MAX_SAFE_INTEGER });
  });

  it.each(['', ' 42', '-1', '4.2', '9999999999999999', '12345678901234567', 'k3x9a2b7q1-0', 'K3X9-1'])('refuses %j', (value) => {
    expect(parseEventId(value)).toBeUndefined();
  });

  it('reads the id at the end of an element IRI, and nothing from another IRI', () => {
    expect(elementIdOfIri('http://127.0.0.1:8080/streams/parking/elements/k3x9a2b7q1-42')).toEqual({ epoch: 'k3x9a2b7q1', seq: 42 });
    expect(elementIdOfIri('http://127.0.0.1:8080/streams/parking/elements/7')).toEqual({ epoch: undefined, seq: 7 });
    expect(elementIdOfIri('http://127.0.0.1:8080/streams/parking/latest')).toBeUndefined();
    expect(elementIdOfIri('http://127.0.0.1:8080/streams/parking/elements/k3x9a2b7q1-42/x')).toBeUndefined();
  });
});

describe('the resources of a stream', () => {
  const stream = 'https://data.example/streams/parking';

  it('are at the paths docs/protocol.md names, below the stream IRI', () => {
    expect(streamIri('https://data.example', 'parking')).toBe(stream);
    expect(streamResources(stream)).toEqual({
      stream,
      latest: `${stream}/latest`,
      events: `${stream}/events`,
      patches: `${stream}/patches`,
      webSocket: 'wss://data.example/streams/parking/ws',
      history: `${stream}/history`,
      historyIndex: `${stream}/history/index`,
      historyPage: expect.any(Function),
      element: expect.any(Function),
      sensor: expect.any(Function),
      featureOfInterest: expect.any(Function),
      sparql: `${stream}/sparql`,
    });
    expect(streamResources(stream).element('k3x9a2b7q1-42')).toBe(`${stream}/elements/k3x9a2b7q1-42`);
    expect(streamResources(stream).historyPage('k3x9a2b7q1-1')).toBe(`${stream}/history/k3x9a2b7q1-1`);
    expect(streamResources(stream).sensor('p01')).toBe(`${stream}/sensors/p01`);
    expect(streamResources(stream).featureOfInterest('p01')).toBe(`${stream}/facilities/p01`);
    expect(streamResources('http://127.0.0.1:8080/streams/parking').webSocket).toBe('ws://127.0.0.1:8080/streams/parking/ws');
  });

  it('are found from a stream URL written with trailing slashes', () => {
    expect(streamResources(`${stream}//`).latest).toBe(`${stream}/latest`);
  });

  it('give a router its patterns, and a request its path', () => {
    expect(STREAMS_PATH).toBe('/streams');
    expect(streamPath('parking')).toBe('/streams/parking');
    expect(streamPath(':id', 'webSocket')).toBe('/streams/:id/ws');
    expect(Object.values(streamResourceSegments)).toEqual(['latest', 'events', 'patches', 'ws', 'history', 'elements', 'sensors', 'facilities', 'sparql']);
  });

  it.each([
    ['/streams/parking', { streamId: 'parking', resource: undefined, member: undefined, query: undefined }],
    ['/streams/parking?format=trig', { streamId: 'parking', resource: undefined, member: undefined, query: 'format=trig' }],
    ['/streams/parking/latest', { streamId: 'parking', resource: 'latest', member: undefined, query: undefined }],
    ['/streams/parking/ws?lastEventId=a-1', { streamId: 'parking', resource: 'webSocket', member: undefined, query: 'lastEventId=a-1' }],
    ['/streams/parking/patches?', { streamId: 'parking', resource: 'patches', member: undefined, query: '' }],
    ['/streams/parking/history/k3x9-2', { streamId: 'parking', resource: 'history', member: 'k3x9-2', query: undefined }],
    ['/streams/parking/elements/k3x9-42?format=turtle', { streamId: 'parking', resource: 'elements', member: 'k3x9-42', query: 'format=turtle' }],
    ['/streams/parking/sensors/p01', { streamId: 'parking', resource: 'sensors', member: 'p01', query: undefined }],
    ['/streams/parking/facilities/p01?format=jsonld', { streamId: 'parking', resource: 'featuresOfInterest', member: 'p01', query: 'format=jsonld' }],
  ])('reads %s', (path, match) => {
    expect(matchStreamPath(path)).toEqual(match);
  });

  it.each([
    '/streams',
    '/streams/',
    '/streams/parking/',
    '/streams/Parking/latest',
    '/streams/park%69ng',
    '/streams/parking/latest/',
    '/streams/parking/latest/x',
    '/streams/parking/feed',
    '/streams/parking/elements/',
    '/streams/parking/elements/a/b',
    '/streams/parking/sensors/',
    '/streams/parking/facilities/p01/x',
    '/health',
    '/prefix/streams/parking/latest',
  ])('reads nothing of %s', (path) => {
    expect(matchStreamPath(path)).toBeUndefined();
  });

  it('builds one pattern for a hot path: the stream id and the query, for the resources named only', () => {
    const latest = streamPathPattern('latest');
    expect(latest.exec('/streams/parking/latest?format=turtle')?.slice(1)).toEqual(['parking', 'format=turtle']);
    expect(latest.exec('/streams/parking/latest')?.slice(1)).toEqual(['parking', undefined]);
    expect(['/streams/parking/latestx', '/streams/parking/events', '/streams/-x/latest', '/streams/parking/latest/'].some((path) => latest.test(path))).toBe(false);
    const feeds = streamPathPattern('events', 'patches');
    expect(['/streams/a/events', '/streams/a/patches?format=trig'].every((path) => feeds.test(path))).toBe(true);
    expect(feeds.test('/streams/a/ws')).toBe(false);
  });
});

describe('the terms and contexts clients read', () => {
  it('names DCAT, SOSA and QUDT terms in their namespaces', () => {
    expect(catalogueTerms.mediaType).toBe('http://www.w3.org/ns/dcat#mediaType');
    expect(catalogueTerms.temporalResolution).toBe('http://www.w3.org/ns/dcat#temporalResolution');
    expect(catalogueTerms.title).toBe('http://purl.org/dc/terms/title');
    expect(observationTerms.hasSimpleResult).toBe('http://www.w3.org/ns/sosa/hasSimpleResult');
    expect(observationTerms.numericValue).toBe('http://qudt.org/schema/qudt/numericValue');
    expect(streamTerms.generatedAtTime).toBe(`${namespaces.prov}generatedAtTime`);
  });

  it('maps every term of the JSON-LD context to the namespaces above, and freezes it', () => {
    const context = sosaStreamContext['@context'] as Record<string, unknown>;
    expect(context['@version']).toBe(1.1);
    expect(context.sosa).toBe(namespaces.sosa);
    expect(context.prov).toBe(namespaces.prov);
    expect(context.qudt).toBe(namespaces.qudt);
    expect(context.generatedAtTime).toEqual({ '@id': 'prov:generatedAtTime', '@type': 'xsd:dateTime' });
    expect(Object.keys(context)).not.toContain('@vocab');
    expect(Object.isFrozen(sosaStreamContext) && Object.isFrozen(context) && Object.isFrozen(context.hasResult)).toBe(true);
  });

  it('names the Solid notification contexts, Activity Streams first in a notification', () => {
    expect(solidNotifications.notificationContexts).toEqual(['https://www.w3.org/ns/activitystreams', solidNotifications.context]);
    expect(solidNotifications.servicePaths.eventSource.startsWith(`${solidNotifications.path}/`)).toBe(true);
  });
});

describe("this project's own IRIs", () => {
  it('are under one w3id.org namespace, the vocabulary included', () => {
    for (const iri of [...Object.values(ontologyIris), streamTerms.sequenceNumber, streamTerms.timeIndex, ...Object.values(resourceTerms)]) {
      expect(iri.startsWith(RDF_STREAM_IRI_BASE)).toBe(true);
    }
    expect(streamTerms.sequenceNumber).toBe(`${namespaces.rdfStream}sequenceNumber`);
    expect(streamTerms.timeIndex).toBe(`${namespaces.rdfStream}timeIndex`);
  });

  it('are served below /ontologies/, by the path below the namespace, without the fragment', () => {
    expect(ontologyPath(streamTerms.sequenceNumber)).toBe('/ontologies/vocab');
    expect(ontologyPath(ontologyIris.profile)).toBe('/ontologies/profile/sosa');
    expect(ontologyPath(ontologyIris.elementShape)).toBe('/ontologies/profile/sosa/shapes');
    expect(ontologyPath('https://w3id.org/ldes#EventStream')).toBeUndefined();
    expect(ontologyPath(RDF_STREAM_IRI_BASE)).toBeUndefined();
  });
});
