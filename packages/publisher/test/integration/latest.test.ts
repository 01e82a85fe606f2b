import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { formatNames } from '@rdf-stream/protocol';
import { elementQuads } from '../../src/model/observation.js';
import { formats } from '../../src/render/output-formats.js';
import { type RunningPublisher, sampleObservations, startPublisher } from '../support/publisher-fixture.js';
import { expectIsomorphic, flatten, parseRdf } from '../support/rdf.js';
import { readProblem } from '../support/problem.js';
import { waitUntil } from '../support/wait-until.js';

let running: RunningPublisher | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers });

describe('GET /streams/{id}/latest on a real socket', () => {
  it('answers 503 problem+json with Retry-After before the first element', async () => {
    running = await startPublisher();
    const response = await get(`${running.url}/streams/parking/latest`);
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json(; charset=utf-8)?$/);
    expect(response.headers.get('retry-after')).toBe('1');
    expect((await readProblem(response)).code).toBe('PUB_ERR_NO_ELEMENT_YET');
  });

  it('keeps idle connections open for keepAliveTimeoutMs on every path (fast path and Fastify)', async () => {
    running = await startPublisher(['--keep-alive-timeout-ms', '42000']);
    await running.push();
    for (const path of ['/streams/parking/latest', '/health']) {
      const response = await get(`${running.url}${path}`);
      await response.arrayBuffer();
      expect(response.headers.get('keep-alive'), path).toBe('timeout=42');
    }
  });

  it.each(formatNames)('serves %s that parses back to the element quads, and its triples in the default graph too', async (format) => {
    running = await startPublisher();
    const generatedAt = new Date();
    const observations = sampleObservations(running.hub.definition.iri, [5, 6, 7]);
    const seq = await running.push(observations, generatedAt);
    const response = await get(`${running.url}/streams/parking/latest`, { accept: formats[format].mediaType });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain(formats[format].mediaType);
    const graph = `${running.hub.definition.iri}/elements/${running.hub.log.epoch}-${seq}`;
    const expected = elementQuads(graph, generatedAt, observations);
    const parsed = await parseRdf(format, await response.text());
    // Formats with graphs: the element (its named graph) and, for plain SPARQL queries over the
    // document, the same triples in the default graph; formats without: the default graph alone.
    const union = [...expected, ...flatten(expected).filter((flat) => !expected.some((quad) => quad.equals(flat)))];
    expectIsomorphic(parsed, formats[format].graphs ? union : flatten(expected));
  });

  it('sends caching headers up to the next expected element, validators and Vary', async () => {
    running = await startPublisher();
    const generatedAt = new Date();
    await running.push(undefined, generatedAt);
    const before = Date.now();
    const response = await get(`${running.url}/streams/parking/latest`);
    const cacheControl = response.headers.get('cache-control')!;
    const maxAge = Number(/^public, max-age=(\d+)(, s-maxage=1)?$/.exec(cacheControl)?.[1]);
    const remaining = (generatedAt.getTime() + 5_000 - before) / 1000;
    expect(maxAge).toBeLessThanOrEqual(Math.floor(remaining));
    expect(maxAge).toBeGreaterThanOrEqual(Math.floor(remaining) - 1);
    expect(Date.parse(response.headers.get('expires')!)).toBeGreaterThan(before - 1000);
    expect(response.headers.get('last-modified')).toBe(new Date(Math.floor(generatedAt.getTime() / 1000) * 1000).toUTCString());
    expect(response.headers.get('etag')).toMatch(/^"[\w-]+-1-turtle(-br|-gzip)?"$/);
    expect(response.headers.get('vary')).toBe('Accept, Accept-Encoding');
    expect(response.headers.get('link')).toBe(`<${running.hub.definition.iri}>; rel="describedby"`);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('exposes to scripts the headers every other response exposes (one CORS list)', async () => {
    running = await startPublisher();
    await running.push();
    const exposed = async (path: string, headers: Record<string, string> = {}) => {
      const response = await get(`${running!.url}${path}`, { origin: 'https://app.example', ...headers });
      await response.arrayBuffer();
      return response.headers.get('access-control-expose-headers');
    };
    const everywhere = await exposed('/streams/parking');
    expect(everywhere).toBe('ETag, Link, Expires, Last-Modified, Retry-After, Stream-Gap, Date, Location, WWW-Authenticate, Accept-Post');
    // The fast path answers /latest with its own pre-built headers, not through @fastify/cors.
    expect(await exposed('/streams/parking/latest')).toBe(everywhere);
  });

  it('micro-caches a stream without a regular interval for 1 s', async () => {
    running = await startPublisher([], { intervalMs: null });
    await running.push();
    const response = await get(`${running.url}/streams/parking/latest`);
    expect(response.headers.get('cache-control')).toBe('public, max-age=1');
  });

  it('serves pre-compressed gzip and br bodies equal to the identity body, each with its own ETag', async () => {
    running = await startPublisher();
    await running.push();
    const url = `${running.url}/streams/parking/latest`;
    const { request } = await import('undici');
    const bodies: Record<string, { bytes: Buffer; etag: string }> = {};
    for (const encoding of ['identity', 'gzip', 'br']) {
      const response = await request(url, { headers: { 'accept-encoding': encoding } });
      expect(response.headers['content-encoding']).toBe(encoding === 'identity' ? undefined : encoding);
      bodies[encoding] = { bytes: Buffer.from(await response.body.arrayBuffer()), etag: String(response.headers.etag) };
    }
    expect(gunzipSync(bodies.gzip!.bytes).equals(bodies.identity!.bytes)).toBe(true);
    expect(brotliDecompressSync(bodies.br!.bytes).equals(bodies.identity!.bytes)).toBe(true);
    expect(new Set(Object.values(bodies).map((body) => body.etag)).size).toBe(3);
  });

  it('answers 304 to If-None-Match with any coding of the current element, 200 once a new one exists', async () => {
    running = await startPublisher();
    await running.push();
    const url = `${running.url}/streams/parking/latest`;
    const first = await get(url, { 'accept-encoding': 'gzip' });
    const etag = first.headers.get('etag')!;
    const revalidated = await get(url, { 'if-none-match': etag });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get('cache-control')).toMatch(/^public, max-age=\d+(, s-maxage=1)?$/);
    expect(revalidated.headers.get('etag')).toMatch(/-1-turtle(-br|-gzip)?"$/);
    await running.push();
    const changed = await get(url, { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).toMatch(/-2-turtle(-br|-gzip)?"$/);
  });

  it('406 problem+json for an unacceptable media type, listing what is offered', async () => {
    running = await startPublisher();
    await running.push();
    const response = await get(`${running.url}/streams/parking/latest`, { accept: 'text/html' });
    expect(response.status).toBe(406);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json(; charset=utf-8)?$/);
    const problem = await readProblem(response);
    expect(problem).toMatchObject({ status: 406, code: 'PUB_ERR_NOT_ACCEPTABLE', instance: '/streams/parking/latest' });
    expect(problem.acceptable).toContain('application/ld+json');
  });

  it('404 problem+json for an unknown stream', async () => {
    running = await startPublisher();
    const response = await get(`${running.url}/streams/nope/latest`);
    expect(response.status).toBe(404);
    expect((await readProblem(response)).code).toBe('PUB_ERR_STREAM_NOT_FOUND');
  });

  it('HEAD gives the headers without a body', async () => {
    running = await startPublisher();
    await running.push();
    const response = await fetch(`${running.url}/streams/parking/latest`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toMatch(/-1-turtle(-br|-gzip)?"$/);
    expect(await response.text()).toBe('');
  });
});

describe('long-polling (If-None-Match + Prefer: wait)', () => {
  it('holds the request until the next element, then answers 200 with it', async () => {
    running = await startPublisher();
    await running.push();
    const url = `${running.url}/streams/parking/latest`;
    const etag = (await get(url)).headers.get('etag')!;
    const held = get(url, { 'if-none-match': etag, prefer: 'wait=20' });
    await waitUntil(() => running!.hub.waiters.size === 1);
    await running.push();
    const response = await held;
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toMatch(/-2-turtle(-br|-gzip)?"$/);
    expect(running.hub.waiters.size).toBe(0);
  });

  it('answers 304 when the wait ends without a new element', async () => {
    running = await startPublisher();
    await running.push();
    const url = `${running.url}/streams/parking/latest`;
    const etag = (await get(url)).headers.get('etag')!;
    const response = await get(url, { 'if-none-match': etag, prefer: 'wait=1' });
    expect(response.status).toBe(304);
  });

  it('answers at once when the client does not have the latest element', async () => {
    running = await startPublisher();
    await running.push();
    const response = await get(`${running.url}/streams/parking/latest`, { 'if-none-match': '"old"', prefer: 'wait=60' });
    expect(response.status).toBe(200);
    expect(running.hub.waiters.size).toBe(0);
  });

  it('holds at most maxLongPollWaiters requests; the next gets 503 problem+json', async () => {
    running = await startPublisher(['--max-long-poll-waiters', '2']);
    await running.push();
    const url = `${running.url}/streams/parking/latest`;
    const etag = (await get(url)).headers.get('etag')!;
    const held = [get(url, { 'if-none-match': etag, prefer: 'wait=20' }), get(url, { 'if-none-match': etag, prefer: 'wait=20' })];
    await waitUntil(() => running!.hub.waiters.size === 2);
    const refused = await get(url, { 'if-none-match': etag, prefer: 'wait=20' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect((await readProblem(refused)).code).toBe('PUB_ERR_LONG_POLL_LIMIT');
    await running.push();
    expect((await Promise.all(held)).map((response) => response.status)).toEqual([200, 200]);
  });

  it('forgets a waiter whose client went away', async () => {
    running = await startPublisher();
    await running.push();
    const url = `${running.url}/streams/parking/latest`;
    const etag = (await get(url)).headers.get('etag')!;
    const abort = new AbortController();
    const held = fetch(url, { headers: { 'if-none-match': etag, prefer: 'wait=30' }, signal: abort.signal }).catch(() => 'aborted');
    await waitUntil(() => running!.hub.waiters.size === 1);
    abort.abort();
    expect(await held).toBe('aborted');
    await waitUntil(() => running!.hub.waiters.size === 0);
  });
});
