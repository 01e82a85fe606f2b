import cors, { type FastifyCorsOptions } from '@fastify/cors';
import { exposedHeaders } from '@rdf-stream/protocol';
import Fastify, { type FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { corsPolicy, ingestOrigins, originAllowed } from '../../../src/http/cors-policy.js';

/** The options the policy gives a request (the delegator answers synchronously). */
function optionsFor(setting: string, method: string, url: string, headers: Record<string, string> = {}): FastifyCorsOptions {
  let options: FastifyCorsOptions | undefined;
  corsPolicy(setting)({ method, url, headers } as unknown as FastifyRequest, (error, given) => {
    if (error !== null) throw error;
    options = given;
  });
  if (options === undefined) throw new Error('the policy gave no options');
  return options;
}

type Request = readonly [method: string, url: string, headers?: Record<string, string>];

const preflight = (url: string, requestMethod: string): Request => ['OPTIONS', url, { 'access-control-request-method': requestMethod }];

describe('ingestOrigins', () => {
  it('reads a comma-separated list, trimmed, empty entries dropped', () => {
    expect(ingestOrigins(' https://a.example ,https://b.example,, ')).toEqual(['https://a.example', 'https://b.example']);
  });

  it('is no origin at all for an empty setting (the default)', () => {
    expect(ingestOrigins('')).toEqual([]);
    expect(ingestOrigins(' , ')).toEqual([]);
  });

  it('is any origin as soon as one entry is *', () => {
    expect(ingestOrigins('https://a.example, *')).toBe('*');
  });
});

describe('corsPolicy', () => {
  it('opens every read to any origin, with a fixed list of request headers and the protocol\'s exposed headers', () => {
    for (const [method, url] of [['GET', '/streams/parking/latest'], ['GET', '/streams/parking'], ['HEAD', '/streams'], ['GET', '/streams/parking/events']]) {
      const options = optionsFor('', method!, url!);
      expect(options.origin, `${method} ${url}`).toBe('*');
      expect(options.allowedHeaders).toEqual(['Accept', 'Last-Event-ID', 'If-None-Match', 'If-Modified-Since', 'Prefer', 'Cache-Control', 'Content-Type']);
      expect(options.exposedHeaders).toEqual([...exposedHeaders]);
      expect(options.maxAge).toBe(86_400);
    }
  });

  it('never lets a reader\'s script send Authorization', () => {
    expect(optionsFor('*', 'GET', '/streams/parking/latest').allowedHeaders).not.toContain('Authorization');
  });

  it('closes ingest (a POST to a stream) and its preflight to every other origin by default', () => {
    for (const request of [['POST', '/streams/parking'], preflight('/streams/parking', 'POST')] satisfies Request[]) {
      expect(optionsFor('', ...request).origin).toBe(false);
    }
  });

  it('closes /metrics, with or without a query, to every other origin by default', () => {
    expect(optionsFor('', 'GET', '/metrics').origin).toBe(false);
    expect(optionsFor('', 'GET', '/metrics?name[]=x').origin).toBe(false);
    expect(optionsFor('', ...preflight('/metrics', 'GET')).origin).toBe(false);
  });

  it('opens ingest and /metrics to the origins of corsIngestOrigins, with the ingest headers and a shorter preflight cache', () => {
    const options = optionsFor('https://dash.example, https://ops.example', 'POST', '/streams/parking');
    expect(options.origin).toEqual(['https://dash.example', 'https://ops.example']);
    expect(options.allowedHeaders).toEqual(['Authorization', 'Content-Type', 'Content-Encoding', 'Idempotency-Key']);
    expect(options.exposedHeaders).toEqual([...exposedHeaders]);
    expect(options.maxAge).toBe(600);
    expect(optionsFor('https://ops.example', 'GET', '/metrics').origin).toEqual(['https://ops.example']);
    expect(optionsFor('*', 'POST', '/streams/parking').origin).toBe('*');
  });

  it('treats every spelling of a stream\'s URL as ingest: trailing slash, query, any case of the preflight\'s method', () => {
    for (const request of [
      ['POST', '/streams/parking/'],
      ['POST', '/streams/parking?dryRun=1'],
      ['POST', '/streams/park%69ng'],
      preflight('/streams/parking', 'post'),
      preflight('/streams/parking/', 'Post'),
    ] satisfies Request[]) {
      expect(optionsFor('', ...request).origin, `${request[0]} ${request[1]}`).toBe(false);
    }
  });

  it('keeps reads of the same URLs open: a GET, or a preflight for one, or a preflight that names no method', () => {
    expect(optionsFor('', 'GET', '/streams/parking').origin).toBe('*');
    expect(optionsFor('', ...preflight('/streams/parking', 'GET')).origin).toBe('*');
    expect(optionsFor('', 'OPTIONS', '/streams/parking').origin).toBe('*');
  });

  it('restricts neither a POST below a stream nor a path that only starts like /metrics', () => {
    expect(optionsFor('', 'POST', '/streams/parking/elements').origin).toBe('*');
    expect(optionsFor('', 'POST', '/notifications/eventsource').origin).toBe('*');
    expect(optionsFor('', 'GET', '/metricsx').origin).toBe('*');
  });

  it('means to @fastify/cors what it says: no CORS headers for another origin\'s ingest preflight, any origin for a read', async () => {
    const app = Fastify();
    await app.register(cors, { delegator: corsPolicy('') });
    app.get('/streams/:id', async () => 'descriptor');
    app.post('/streams/:id', async () => 'ingested');
    const ask = (requestMethod: string) =>
      app.inject({
        method: 'OPTIONS',
        url: '/streams/parking',
        headers: { origin: 'https://evil.example', 'access-control-request-method': requestMethod, 'access-control-request-headers': 'authorization' },
      });
    const ingest = await ask('POST');
    expect(ingest.headers['access-control-allow-origin']).toBeUndefined();
    expect(ingest.headers['access-control-allow-headers']).toBeUndefined();
    const read = await ask('GET');
    expect(read.headers['access-control-allow-origin']).toBe('*');
    expect(String(read.headers['access-control-allow-headers']).toLowerCase()).not.toContain('authorization');
    await app.close();
  });
});

describe('originAllowed (the data WebSocket applies the policy itself: CORS does not cover a handshake)', () => {
  const request = (method: string, url: string, origin?: string) =>
    ({ method, url, headers: origin === undefined ? {} : { origin } }) as unknown as FastifyRequest;

  it('allows every origin to read, whatever corsIngestOrigins says, and a request without Origin', () => {
    const allowed = originAllowed('https://ops.example');
    expect(allowed(request('GET', '/streams/parking/ws', 'https://elsewhere.example'))).toBe(true);
    expect(allowed(request('GET', '/streams/parking/ws'))).toBe(true);
  });

  it('refuses an origin the policy does not name where it restricts (ingest, /metrics)', () => {
    expect(originAllowed('')(request('GET', '/metrics', 'https://elsewhere.example'))).toBe(false);
    expect(originAllowed('https://ops.example')(request('GET', '/metrics', 'https://elsewhere.example'))).toBe(false);
    expect(originAllowed('https://ops.example')(request('GET', '/metrics', 'https://ops.example'))).toBe(true);
    expect(originAllowed('*')(request('POST', '/streams/parking', 'https://elsewhere.example'))).toBe(true);
  });
});
