import type { Quad } from '@rdfjs/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  formatNames,
  mediaTypes,
  ontologyIris,
  ontologyPath,
  RDF_STREAM_IRI_BASE,
  resourceTerms,
  streamResources,
  streamTerms,
} from '@rdf-stream/protocol';
import { contentType } from '../../src/render/output-formats.js';
import { startTestPublisher, type TestPublisher } from '../../src/testing.js';
import { startIngestPublisher } from '../support/ingest-publisher.js';
import { readProblem } from '../support/problem.js';
import { parseRdf } from '../support/rdf.js';

/**
 * Every IRI the publisher mints or uses answers: the sensors and features of interest of a
 * stream, the member shape of its descriptor, and this project's vocabulary and profile, in
 * every format, on a real socket.
 */
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const SOSA = 'http://www.w3.org/ns/sosa/';
const SH = 'http://www.w3.org/ns/shacl#';
const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

const has = (quads: readonly Quad[], s: string, p: string, o?: string) =>
  quads.some((q) => q.subject.value === s && q.predicate.value === p && (o === undefined || q.object.value === o));

let running: TestPublisher;
let minted: ReturnType<typeof streamResources>;
let elementIri: string;

beforeAll(async () => {
  // Irregular: /latest and the descriptions are cached for the micro-cache's one second, whatever the clock says.
  running = await startTestPublisher({ intervalMs: null });
  minted = streamResources(running.streamUrl);
  const seq = await running.push([12, 34]);
  elementIri = minted.element(`${running.hub.log.epoch}-${seq}`);
});
afterAll(() => running.close());

describe('GET /streams/{id}/sensors/{local} and /facilities/{local}', () => {
  const resources = () => [
    { iri: minted.sensor('p1'), type: `${SOSA}Sensor`, inverse: `${SOSA}madeObservation` },
    { iri: minted.featureOfInterest('p2'), type: `${SOSA}FeatureOfInterest`, inverse: `${SOSA}isFeatureOfInterestOf` },
  ];

  it.each(formatNames)('describe the resource in %s: its type, its stream, its latest element and observations', async (format) => {
    for (const { iri, type, inverse } of resources()) {
      const response = await fetch(iri, { headers: { accept: mediaTypes[format] } });
      expect(response.status, iri).toBe(200);
      expect(response.headers.get('content-type')).toBe(contentType(format));
      const quads = await parseRdf(format, await response.text());
      expect(has(quads, iri, RDF_TYPE, type)).toBe(true);
      expect(has(quads, iri, resourceTerms.stream, running.streamUrl)).toBe(true);
      expect(has(quads, iri, resourceTerms.latestElement, elementIri)).toBe(true);
      expect(has(quads, elementIri, streamTerms.generatedAtTime)).toBe(true);
      const observations = quads.filter((q) => q.subject.value === iri && q.predicate.value === inverse).map((q) => q.object.value);
      expect(observations).toHaveLength(1);
      const [observation] = observations as [string];
      expect(observation.startsWith(`${elementIri}#`)).toBe(true);
      expect(has(quads, observation, `${SOSA}hasSimpleResult`, iri.endsWith('p1') ? '12' : '34')).toBe(true);
    }
  });

  it('follow the newest element that mentions them, revalidate by it, and are cached as /latest is', async () => {
    const iri = minted.sensor('p1');
    const before = await fetch(iri);
    const etag = before.headers.get('etag')!;
    expect((await fetch(iri, { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await fetch(iri, { headers: { 'if-modified-since': before.headers.get('last-modified')! } })).status).toBe(304);

    const generatedAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 1000);
    const seq = await running.push([56], generatedAt);
    const after = await fetch(iri);
    expect(after.headers.get('etag')).not.toBe(etag);
    expect((await fetch(iri, { headers: { 'if-none-match': etag } })).status).toBe(200);
    expect(after.headers.get('last-modified')).toBe(generatedAt.toUTCString());
    const latest = await fetch(running.streamUrl + '/latest');
    expect(after.headers.get('cache-control')).toBe(latest.headers.get('cache-control'));
    expect(after.headers.get('cache-control')).toBe('public, max-age=1');
    expect(after.headers.get('vary')).toBe('Accept');
    const quads = await parseRdf('turtle', await after.text());
    expect(has(quads, iri, resourceTerms.latestElement, minted.element(`${running.hub.log.epoch}-${seq}`))).toBe(true);
    // p2 was not in that element: its description still comes from the one before.
    const p2 = await parseRdf('turtle', await (await fetch(minted.sensor('p2'))).text());
    expect(has(p2, minted.sensor('p2'), resourceTerms.latestElement, elementIri)).toBe(true);
  });

  it('answer HEAD with the headers of GET and no body, and scripts of any origin', async () => {
    const iri = minted.featureOfInterest('p1');
    const get = await fetch(iri, { headers: { origin: 'https://elsewhere.example' } });
    const body = await get.arrayBuffer();
    const head = await fetch(iri, { method: 'HEAD', headers: { origin: 'https://elsewhere.example' } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(body.byteLength));
    expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    for (const response of [get, head]) {
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('access-control-expose-headers')).toContain('ETag');
    }
  });

  it('send a browser (303) to the live page of the stream', async () => {
    const response = await fetch(minted.sensor('p1'), { headers: { accept: browserAccept }, redirect: 'manual' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(running.streamUrl);
    expect(response.headers.get('vary')).toBe('Accept');
  });

  it('406 problem+json when no RDF format is acceptable, 400 for an unknown ?format=', async () => {
    const refused = await fetch(minted.sensor('p1'), { headers: { accept: 'image/png' } });
    expect(refused.status).toBe(406);
    expect((await readProblem(refused)).code).toBe('PUB_ERR_NOT_ACCEPTABLE');
    const unknown = await fetch(`${minted.sensor('p1')}?format=rdfxml`);
    expect(unknown.status).toBe(400);
    expect((await readProblem(unknown)).code).toBe('PUB_ERR_UNKNOWN_FORMAT');
  });

  it('404 problem+json with a stable code for a resource no element mentioned, and for an unknown stream', async () => {
    for (const iri of [minted.sensor('p9'), minted.featureOfInterest('p9')]) {
      const response = await fetch(iri);
      expect(response.status, iri).toBe(404);
      expect((await readProblem(response)).code).toBe('PUB_ERR_RESOURCE_NOT_FOUND');
    }
    const stream = await fetch(`${running.url}/streams/nothing/sensors/p1`);
    expect((await readProblem(stream)).code).toBe('PUB_ERR_STREAM_NOT_FOUND');
  });
});

describe('the label of a resource, when an element gives one', () => {
  it('is in its description', async () => {
    const token = 'label-token-0123456789abcdefgh';
    const ingest = await startIngestPublisher(token);
    try {
      const stream = streamResources(ingest.streamUrl);
      const turtle = `@prefix sosa: <http://www.w3.org/ns/sosa/>. @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#>.
        <#o1> a sosa:Observation; sosa:madeBySensor <${stream.sensor('roof')}>; sosa:observedProperty <http://example.org/NO2>;
          sosa:hasFeatureOfInterest <${stream.featureOfInterest('square')}>; sosa:hasSimpleResult 41.
        <${stream.sensor('roof')}> rdfs:label "Roof station"@en.`;
      const posted = await fetch(stream.stream, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/turtle' }, body: turtle });
      expect(posted.status).toBe(201);
      const quads = await parseRdf('jsonld', await (await fetch(stream.sensor('roof'), { headers: { accept: 'application/ld+json' } })).text());
      expect(has(quads, stream.sensor('roof'), 'http://www.w3.org/2000/01/rdf-schema#label', 'Roof station')).toBe(true);
      expect(has(quads, stream.sensor('roof'), RDF_TYPE, `${SOSA}Sensor`)).toBe(true);
    } finally {
      await ingest.close();
    }
  });
});

describe('maxDescribedResources', () => {
  it('at the limit, forgets the least recently mentioned resource first: its IRI answers 404 until mentioned again', async () => {
    // Each facility is two resources: its sensor and its feature of interest.
    const limited = await startTestPublisher({ flags: ['--max-described-resources', '2'] });
    try {
      const stream = streamResources(limited.streamUrl);
      await limited.push([1]);
      expect((await fetch(stream.sensor('p1'))).status).toBe(200);
      await limited.push([2, 3]);
      expect((await fetch(stream.sensor('p1'))).status).toBe(404);
      expect((await fetch(stream.featureOfInterest('p1'))).status).toBe(404);
      expect((await fetch(stream.sensor('p2'))).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('GET /ontologies/{path}: the documents of https://w3id.org/rdf-stream/{path}', () => {
  const documents = () => [
    { iri: ontologyIris.vocabulary, defines: streamTerms.sequenceNumber },
    { iri: ontologyIris.profile, defines: ontologyIris.profile },
    { iri: ontologyIris.shapes, defines: ontologyIris.elementShape },
  ];

  it.each(formatNames)('serves each in %s, defining its terms', async (format) => {
    for (const { iri, defines } of documents()) {
      const response = await fetch(`${running.url}${ontologyPath(iri)}`, { headers: { accept: mediaTypes[format] } });
      expect(response.status, iri).toBe(200);
      expect(response.headers.get('content-type')).toBe(contentType(format));
      const quads = await parseRdf(format, await response.text());
      expect(quads.some((q) => q.subject.value === defines), defines).toBe(true);
    }
  });

  it('serves the Turtle as written, with validators, cacheable for a day, to scripts of any origin', async () => {
    const response = await fetch(`${running.url}${ontologyPath(ontologyIris.shapes)}`, { headers: { origin: 'https://elsewhere.example' } });
    expect(await response.text()).toContain('# The shape of a stream');
    expect(response.headers.get('cache-control')).toBe('public, max-age=86400');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const etag = response.headers.get('etag')!;
    expect((await fetch(`${running.url}${ontologyPath(ontologyIris.shapes)}`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    const head = await fetch(`${running.url}${ontologyPath(ontologyIris.shapes)}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(etag);
  });

  it("names the shape in the stream's descriptor (tree:shape) and where it is defined here", async () => {
    const quads = await parseRdf('turtle', await (await fetch(running.streamUrl)).text());
    expect(has(quads, running.streamUrl, 'https://w3id.org/tree#shape', ontologyIris.elementShape)).toBe(true);
    const definedBy = quads.find((q) => q.subject.value === ontologyIris.elementShape && q.predicate.value === 'http://www.w3.org/2000/01/rdf-schema#isDefinedBy');
    expect(definedBy?.object.value).toBe(`${running.url}${ontologyPath(ontologyIris.shapes)}`);
    const shapes = await parseRdf('jsonld', await (await fetch(definedBy!.object.value, { headers: { accept: 'application/ld+json' } })).text());
    expect(has(shapes, ontologyIris.elementShape, RDF_TYPE, `${SH}NodeShape`)).toBe(true);
  });

  it('serves the version IRI of the profile too', async () => {
    const response = await fetch(`${running.url}${ontologyPath(`${ontologyIris.profile}/0.1.0`)}`);
    expect(response.status).toBe(200);
  });

  it('406 for an unacceptable Accept, 404 problem+json for a path that is no document', async () => {
    const refused = await fetch(`${running.url}${ontologyPath(ontologyIris.vocabulary)}`, { headers: { accept: 'image/png' } });
    expect(refused.status).toBe(406);
    expect((await readProblem(refused)).code).toBe('PUB_ERR_NOT_ACCEPTABLE');
    const missing = await fetch(`${running.url}/ontologies/nothing`);
    expect(missing.status).toBe(404);
    expect((await readProblem(missing)).code).toBe('PUB_ERR_ROUTE_NOT_FOUND');
  });
});

describe('every IRI answers', () => {
  /**
   * The IRIs to follow from a document: those of this publisher (a fragment dropped: its
   * document) and this project's (through the path w3id.org redirects to, as the .htaccess in
   * docs/protocol.md does). Other vocabularies (SOSA, PROV, DATEX) are not ours to answer.
   */
  function ownIris(quads: readonly Quad[]): string[] {
    const iris = quads.flatMap((q) => [q.subject, q.predicate, q.object, q.graph]).filter((term) => term.termType === 'NamedNode');
    return iris.map((term) => term.value).filter((iri) => iri.startsWith(`${running.url}/`) || iri.startsWith(RDF_STREAM_IRI_BASE));
  }

  it('dereferences every IRI of /latest, of the history root, of the descriptions they lead to, and the shape and vocabulary the descriptor names', async () => {
    await running.push([7, 8]);
    const descriptor = await parseRdf('turtle', await (await fetch(running.streamUrl)).text());
    const named = descriptor
      .filter((q) => q.subject.value === running.streamUrl)
      .filter((q) => ['https://w3id.org/tree#shape', 'http://purl.org/dc/terms/conformsTo', 'https://w3id.org/ldes#sequencePath'].includes(q.predicate.value))
      .map((q) => q.object.value);
    const latest = await parseRdf('nquads', await (await fetch(`${running.streamUrl}/latest`, { headers: { accept: mediaTypes.nquads } })).text());
    // The history's root: its pages, its time index and the vocabulary of its link to it.
    const history = await parseRdf('nquads', await (await fetch(`${running.streamUrl}/history`, { headers: { accept: mediaTypes.nquads } })).text());
    const pending = [...new Set([...ownIris(latest), ...named, ...ownIris(history)])];
    const answered = new Map<string, number>();
    while (pending.length > 0) {
      const iri = pending.shift() as string;
      const url = iri.startsWith(RDF_STREAM_IRI_BASE) ? `${running.url}${ontologyPath(iri)}` : iri.replace(/#.*$/, '');
      if (answered.has(url)) continue;
      const response = await fetch(url, { headers: { accept: mediaTypes.turtle } });
      answered.set(url, response.status);
      expect(response.status, `${iri} (${url})`).toBe(200);
      const quads = await parseRdf('turtle', await response.text());
      if (url !== iri) expect(quads.some((q) => q.subject.value === iri), `${url} describes ${iri}`).toBe(true);
      // Follow what the minted resources' descriptions use: the vocabulary of their links, their elements.
      if (url.includes('/sensors/') || url.includes('/facilities/')) pending.push(...ownIris(quads).filter((next) => !answered.has(next)));
    }
    const visited = [...answered.keys()];
    for (const expected of [
      minted.sensor('p1'),
      minted.sensor('p2'),
      minted.featureOfInterest('p1'),
      minted.featureOfInterest('p2'),
      running.streamUrl,
      `${running.streamUrl}/history/index`,
      `${running.url}${ontologyPath(ontologyIris.vocabulary)}`,
      `${running.url}${ontologyPath(ontologyIris.profile)}`,
      `${running.url}${ontologyPath(ontologyIris.shapes)}`,
    ]) {
      expect(visited).toContain(expected);
    }
  });
});
