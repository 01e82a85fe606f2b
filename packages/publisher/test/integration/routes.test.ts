/**
 * Route tests with inject(): they bypass the socket, hence the polling fast path, and exercise
 * the Fastify routes that answer long-polls, errors and everything while shedding — which must
 * agree with the fast path (integration tests cover that one on real sockets).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningPublisher, startPublisher } from '../support/publisher-fixture.js';

let running: RunningPublisher;
let app: FastifyInstance;
beforeAll(async () => {
  running = await startPublisher();
  await running.push();
  app = running.publisher.app;
});
afterAll(() => running.close());

describe('Fastify routes (inject)', () => {
  it('GET /streams/parking/latest answers like the fast path: same body, same headers', async () => {
    const injected = await app.inject({ url: '/streams/parking/latest', headers: { accept: 'application/n-quads' } });
    const fast = await fetch(`${running.url}/streams/parking/latest`, {
      headers: { accept: 'application/n-quads', 'accept-encoding': 'identity' },
    });
    expect(injected.statusCode).toBe(200);
    expect(injected.body).toBe(await fast.text());
    for (const name of ['content-type', 'etag', 'cache-control', 'vary', 'link', 'last-modified', 'access-control-allow-origin']) {
      expect(injected.headers[name], name).toBe(fast.headers.get(name));
    }
  });

  it('304 on If-None-Match, without content headers', async () => {
    const first = await app.inject({ url: '/streams/parking/latest' });
    const again = await app.inject({ url: '/streams/parking/latest', headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers['content-type']).toBeUndefined();
  });

  it('406, 404 and 400 as problem+json', async () => {
    const notAcceptable = await app.inject({ url: '/streams/parking/latest', headers: { accept: 'image/png' } });
    expect([notAcceptable.statusCode, notAcceptable.json().code]).toEqual([406, 'PUB_ERR_NOT_ACCEPTABLE']);
    const unknown = await app.inject({ url: '/streams/nope' });
    expect([unknown.statusCode, unknown.json().code]).toEqual([404, 'PUB_ERR_STREAM_NOT_FOUND']);
    const badFormat = await app.inject({ url: '/streams/parking/events?format=xml' });
    expect([badFormat.statusCode, badFormat.json().code]).toEqual([400, 'PUB_ERR_UNKNOWN_FORMAT']);
    const route = await app.inject({ url: '/nothing/here' });
    expect([route.statusCode, route.json().code]).toEqual([404, 'PUB_ERR_ROUTE_NOT_FOUND']);
    expect(route.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('GET /streams and /streams/parking negotiate their format', async () => {
    const catalogue = await app.inject({ url: '/streams', headers: { accept: 'application/ld+json' } });
    expect(catalogue.headers['content-type']).toBe('application/ld+json');
    expect(catalogue.json()['@context']).toBe(`${running.url}/contexts/sosa-stream.jsonld`);
    const descriptor = await app.inject({ url: '/streams/parking', headers: { accept: 'application/trig' } });
    expect(descriptor.headers['content-type']).toBe('application/trig; charset=utf-8');
    expect(descriptor.body).toContain('ldes:EventStream');
  });

  it('GET /health and /metrics', async () => {
    expect((await app.inject({ url: '/health' })).json().status).toBe('ok');
    expect((await app.inject({ url: '/metrics' })).body).toContain('rdf_stream_elements_published_total{stream="parking"} 1');
  });
});
