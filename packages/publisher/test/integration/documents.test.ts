import { Parser } from 'n3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatNames } from '@rdf-stream/protocol';
import { formats } from '../../src/render/output-formats.js';
import { type RunningPublisher, startPublisher } from '../support/publisher-fixture.js';
import { readProblem } from '../support/problem.js';
import { parseRdf } from '../support/rdf.js';

let running: RunningPublisher;
beforeAll(async () => {
  running = await startPublisher();
});
afterAll(() => running.close());

const DCAT = 'http://www.w3.org/ns/dcat#';
const has = (quads: Awaited<ReturnType<typeof parseRdf>>, s: string, p: string, o?: string) =>
  quads.some((q) => q.subject.value === s && q.predicate.value === p && (o === undefined || q.object.value === o));

describe('GET /streams (catalogue)', () => {
  it('is a dcat:Catalog listing the stream', async () => {
    const response = await fetch(`${running.url}/streams`);
    expect(response.headers.get('content-type')).toBe('text/turtle; charset=utf-8');
    const quads = new Parser().parse(await response.text());
    const catalogue = `${running.url}/streams`;
    expect(has(quads, catalogue, 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type', `${DCAT}Catalog`)).toBe(true);
    expect(has(quads, catalogue, `${DCAT}dataset`, `${running.url}/streams/parking`)).toBe(true);
  });
});

describe('GET /streams/{id} (descriptor)', () => {
  const stream = () => `${running.url}/streams/parking`;

  it.each(formatNames)('is served as %s', async (format) => {
    const response = await fetch(stream(), { headers: { accept: formats[format].mediaType } });
    expect(response.status).toBe(200);
    const quads = await parseRdf(format, await response.text());
    expect(has(quads, stream(), 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type', 'https://w3id.org/ldes#EventStream')).toBe(true);
  });

  it('declares LDES, VoCaLS and DCAT: the timestamp path and every interface in every format', async () => {
    const quads = new Parser().parse(await (await fetch(stream())).text());
    expect(has(quads, stream(), 'https://w3id.org/ldes#timestampPath', 'http://www.w3.org/ns/prov#generatedAtTime')).toBe(true);
    expect(has(quads, stream(), 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type', 'http://w3id.org/rsp/vocals#RDFStream')).toBe(true);
    const accessUrls = quads.filter((q) => q.predicate.value === `${DCAT}accessURL`).map((q) => q.object.value);
    const webSocket = `${stream().replace(/^http:/, 'ws:')}/ws`;
    for (const format of formatNames) {
      expect(accessUrls).toContain(`${stream()}/events?format=${format}`);
      expect(accessUrls).toContain(`${webSocket}?format=${format}`);
    }
    expect(accessUrls).toContain(`${stream()}/latest`);
    const endpoints = quads.filter((q) => q.predicate.value === 'http://w3id.org/rsp/vocals#hasEndpoint');
    // SSE and the data WebSocket, in every format.
    expect(endpoints).toHaveLength(2 * formatNames.length);
    const mediaTypes = new Set(quads.filter((q) => q.predicate.value === `${DCAT}mediaType`).map((q) => q.object.value));
    for (const format of formatNames) {
      expect(mediaTypes).toContain(`https://www.iana.org/assignments/media-types/${formats[format].mediaType}`);
    }
  });

  it('advertises the interfaces with Link headers', async () => {
    const link = (await fetch(stream())).headers.get('link')!;
    expect(link).toContain(`<${stream()}/latest>; rel="latest-version"`);
    expect(link).toContain(`<${stream()}/events>; rel="alternate"; type="text/event-stream"`);
    expect(link).toContain(`<${stream().replace(/^http:/, 'ws:')}/ws>; rel="alternate"`);
  });

  it('revalidates with its ETag', async () => {
    const etag = (await fetch(stream())).headers.get('etag')!;
    const again = await fetch(stream(), { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });

  it('404 problem+json for an unknown stream', async () => {
    const response = await fetch(`${running.url}/streams/unknown`);
    expect(response.status).toBe(404);
    expect((await readProblem(response)).code).toBe('PUB_ERR_STREAM_NOT_FOUND');
  });
});

describe('GET /contexts/sosa-stream.jsonld', () => {
  it('serves the bundled context, cacheable for a day', async () => {
    const response = await fetch(`${running.url}/contexts/sosa-stream.jsonld`);
    expect(response.headers.get('content-type')).toBe('application/ld+json');
    expect(response.headers.get('cache-control')).toBe('public, max-age=86400');
    const context = (await response.json()) as { '@context': Record<string, { '@type'?: string }> };
    expect(context['@context'].resultTime?.['@type']).toBe('xsd:dateTime');
  });
});

describe('GET /streams/{id}/elements/{epoch}-{seq}', () => {
  it('serves a retained element in every format, byte for byte as /latest served it in formats without graphs', async () => {
    const seq = await running.push();
    const element = `${running.url}/streams/parking/elements/${running.hub.log.epoch}-${seq}`;
    for (const format of formatNames) {
      const headers = { accept: formats[format].mediaType, 'accept-encoding': 'identity' };
      const latest = await (await fetch(`${running.url}/streams/parking/latest`, { headers })).text();
      const response = await fetch(element, { headers });
      expect(response.status, format).toBe(200);
      expect(response.headers.get('content-type')).toContain(formats[format].mediaType);
      expect(response.headers.get('cache-control'), format).toBe('public, max-age=31536000, immutable');
      const body = await response.text();
      // /latest adds the default-graph copy of the triples to formats with graphs (see protocol.md).
      if (format === 'trig' || format === 'nquads') expect(latest.endsWith(body), format).toBe(true);
      if (formats[format].graphs) expect(latest.length, format).toBeGreaterThan(body.length);
      else expect(body, format).toBe(latest);
      expect(body, format).toContain(`elements/${running.hub.log.epoch}-${seq}`);
    }
    await running.push();
    const old = await fetch(element, { headers: { accept: 'text/turtle' } });
    expect(old.status).toBe(200);
    const etag = old.headers.get('etag')!;
    expect((await fetch(element, { headers: { accept: 'text/turtle', 'if-none-match': etag } })).status).toBe(304);
  });

  it('404 problem+json for an element newer than the log, and for a malformed id', async () => {
    await running.push();
    const { epoch, latestSeq } = running.hub.log;
    for (const id of [`${epoch}-999999`, `${epoch}-0`, `${epoch}-01`, '999999', '1', '0', '01', 'abc']) {
      const response = await fetch(`${running.url}/streams/parking/elements/${id}`);
      expect(response.status, id).toBe(404);
      expect(await readProblem(response), id).toMatchObject({ code: 'PUB_ERR_ELEMENT_NOT_FOUND', epoch, oldestSeq: 1, latestSeq });
    }
  });

  it('410 problem+json for an element removed by retention, and for one of another life of the log', async () => {
    // Pages of one element: retention keeps exactly the 2 newest.
    const retaining = await startPublisher(['--retained-elements', '2', '--page-elements', '1']);
    try {
      for (let index = 0; index < 4; index++) await retaining.push();
      const { epoch } = retaining.hub.log;
      const otherEpoch = `${epoch.startsWith('a') ? 'b' : 'a'}${epoch.slice(1)}`;
      for (const id of [`${epoch}-1`, `${epoch}-2`, `${otherEpoch}-3`]) {
        const response = await fetch(`${retaining.url}/streams/parking/elements/${id}`);
        expect(response.status, id).toBe(410);
        expect(await readProblem(response), id).toMatchObject({ code: 'PUB_ERR_ELEMENT_GONE', epoch, oldestSeq: 3, latestSeq: 4 });
      }
      expect((await fetch(`${retaining.url}/streams/parking/elements/${epoch}-3`)).status).toBe(200);
    } finally {
      await retaining.close();
    }
  });
});
