import type { Socket } from 'node:net';
import { Writable } from 'node:stream';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_DETAIL_CHARS, MAX_ECHOED_CHARS, PublisherError, TRUNCATION_MARK } from '../../../src/errors.js';
import { clientErrorHandler, frameworkErrorHandler, problemBody, registerProblemHandlers, toPublisherError } from '../../../src/http/problem.js';

/** What an error must never show a client: its message, a stack frame, a path, our sources. */
const INTERNALS = /secret|credentials|\/etc\/|\bat\b.*:\d+:\d+|node_modules|\.ts\b/;

const fastifyError = (message: string, fields: { code?: string; statusCode?: number }) => Object.assign(new Error(message), fields) as FastifyError;

describe('problemBody', () => {
  it('is an RFC 9457 problem: type (a stable URN), title, status and code from the catalogue, then detail and instance', () => {
    const body = problemBody(new PublisherError('PUB_ERR_STREAM_NOT_FOUND', 'No stream with id "x"'), '/streams/x');
    expect(body).toEqual({
      type: 'urn:rdf-stream:error:PUB_ERR_STREAM_NOT_FOUND',
      title: 'Stream not found',
      status: 404,
      code: 'PUB_ERR_STREAM_NOT_FOUND',
      detail: 'No stream with id "x"',
      instance: '/streams/x',
    });
  });

  it('has no detail or instance members when there are none', () => {
    expect(Object.keys(problemBody(new PublisherError('PUB_ERR_INTERNAL')))).toEqual(['type', 'title', 'status', 'code']);
  });

  it('adds the error\'s extension members', () => {
    expect(problemBody(new PublisherError('PUB_ERR_BODY_TOO_LARGE', 'The body exceeds 10 bytes', { limitBytes: 10 }))).toMatchObject({ limitBytes: 10, status: 413 });
  });

  it('echoes the instance up to MAX_ECHOED_CHARS and the detail up to MAX_DETAIL_CHARS, each cut marked', () => {
    const url = `/${'u'.repeat(MAX_ECHOED_CHARS - 1)}`;
    expect(problemBody(new PublisherError('PUB_ERR_ROUTE_NOT_FOUND'), url).instance).toBe(url);
    expect(problemBody(new PublisherError('PUB_ERR_ROUTE_NOT_FOUND'), `${url}v`).instance).toBe(`${url}${TRUNCATION_MARK}`);
    const detail = 'd'.repeat(MAX_DETAIL_CHARS);
    expect(problemBody(new PublisherError('PUB_ERR_BAD_REQUEST', detail)).detail).toBe(detail);
    expect(problemBody(new PublisherError('PUB_ERR_BAD_REQUEST', `${detail}e`)).detail).toBe(`${detail}${TRUNCATION_MARK}`);
  });
});

describe('toPublisherError', () => {
  it('passes a catalogued error through as it is', () => {
    const error = new PublisherError('PUB_ERR_FORBIDDEN', 'no');
    expect(toPublisherError(error, 5)).toBe(error);
  });

  it('turns Fastify\'s own 405, 413 and 415 into their codes, and any other 4xx into a bad request quoting its message', () => {
    const codes = [405, 413, 415, 400, 404, 431, 499].map((statusCode) => toPublisherError(fastifyError(`status ${statusCode}`, { statusCode }), 5));
    expect(codes.map((error) => [error.code, error.status, error.detail])).toEqual([
      ['PUB_ERR_METHOD_NOT_ALLOWED', 405, 'status 405'],
      ['PUB_ERR_BODY_TOO_LARGE', 413, 'status 413'],
      ['PUB_ERR_UNSUPPORTED_MEDIA_TYPE', 415, 'status 415'],
      ['PUB_ERR_BAD_REQUEST', 400, 'status 400'],
      ['PUB_ERR_BAD_REQUEST', 400, 'status 404'],
      ['PUB_ERR_BAD_REQUEST', 400, 'status 431'],
      ['PUB_ERR_BAD_REQUEST', 400, 'status 499'],
    ]);
  });

  it('bounds a quoted 4xx message like any echo', () => {
    const error = toPublisherError(fastifyError(`Body is not valid JSON: ${'x'.repeat(10_000)}`, { statusCode: 400 }), 5);
    expect(error.detail).toHaveLength(MAX_ECHOED_CHARS + TRUNCATION_MARK.length);
  });

  it('turns under-pressure into 503 overloaded, with Retry-After', () => {
    const error = toPublisherError(fastifyError('Service Unavailable', { code: 'FST_UNDER_PRESSURE', statusCode: 503 }), 7);
    expect([error.code, error.status, error.headers]).toEqual(['PUB_ERR_OVERLOADED', 503, { 'retry-after': '7' }]);
  });

  it('turns anything else into a bare 500 that says nothing of the error', () => {
    for (const thrown of [
      new Error('secret at /etc/credentials'),
      fastifyError('secret at /etc/credentials', { statusCode: 500 }),
      fastifyError('secret', { statusCode: 503 }),
      fastifyError('secret', { statusCode: 302 }),
      new TypeError("Cannot read properties of undefined (reading 'secret')"),
    ]) {
      const error = toPublisherError(thrown, 5);
      expect([error.code, error.status, error.detail], thrown.message).toEqual(['PUB_ERR_INTERNAL', 500, undefined]);
      expect(JSON.stringify(problemBody(error, '/x'))).not.toMatch(INTERNALS);
    }
  });
});

describe('registerProblemHandlers', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  /** An app whose routes throw, with its log lines kept. */
  async function build(): Promise<{ app: FastifyInstance; log: string[] }> {
    const log: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        log.push(chunk.toString());
        callback();
      },
    });
    const built = Fastify({ logger: { level: 'error', stream } });
    registerProblemHandlers(built, 9);
    built.get('/internal', async () => {
      throw new Error('secret at /etc/credentials');
    });
    built.get('/catalogued', async () => {
      throw new PublisherError('PUB_ERR_NO_ELEMENT_YET', undefined, {}, { 'retry-after': '1', 'content-type': 'text/html' });
    });
    built.post('/ingest', async () => 'ok');
    built.get('/pressure', async () => {
      throw fastifyError('Service Unavailable', { code: 'FST_UNDER_PRESSURE', statusCode: 503 });
    });
    app = built;
    await built.ready();
    return { app: built, log };
  }

  it('answers a 5xx with problem+json that carries no message, stack trace or path, and logs the error instead', async () => {
    const { app, log } = await build();
    const response = await app.inject({ url: '/internal' });
    expect(response.statusCode).toBe(500);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json(;|$)/);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).not.toMatch(INTERNALS);
    expect(response.json()).toEqual({
      type: 'urn:rdf-stream:error:PUB_ERR_INTERNAL',
      title: 'Internal error',
      status: 500,
      code: 'PUB_ERR_INTERNAL',
      instance: '/internal',
    });
    expect(log.join('')).toContain('secret at /etc/credentials');
  });

  it('sends a catalogued error with its headers, but always as problem+json', async () => {
    const { app, log } = await build();
    const response = await app.inject({ url: '/catalogued' });
    expect([response.statusCode, response.json().code]).toEqual([503, 'PUB_ERR_NO_ELEMENT_YET']);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json(;|$)/);
    expect(log).toEqual([]);
  });

  it('answers an unknown route with 404 problem+json naming the URL, bounded', async () => {
    const { app } = await build();
    const response = await app.inject({ url: '/nothing/here?x=1' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'PUB_ERR_ROUTE_NOT_FOUND', detail: 'No resource at /nothing/here?x=1', instance: '/nothing/here?x=1' });
    const long = await app.inject({ url: `/${'n'.repeat(5_000)}` });
    expect(long.json().instance).toHaveLength(MAX_ECHOED_CHARS + TRUNCATION_MARK.length);
  });

  it('answers Fastify\'s own refusals with their codes: 415 for a body type no parser reads, 400 for a body it cannot parse', async () => {
    const { app } = await build();
    const unsupported = await app.inject({ method: 'POST', url: '/ingest', headers: { 'content-type': 'application/x-unknown' }, payload: 'x' });
    expect([unsupported.statusCode, unsupported.json().code]).toEqual([415, 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE']);
    expect(unsupported.headers['content-type']).toMatch(/^application\/problem\+json(;|$)/);
    const badJson = await app.inject({ method: 'POST', url: '/ingest', headers: { 'content-type': 'application/json' }, payload: '{' });
    expect([badJson.statusCode, badJson.json().code]).toEqual([400, 'PUB_ERR_BAD_REQUEST']);
  });

  it('answers under-pressure with 503 overloaded and the Retry-After it was given', async () => {
    const { app } = await build();
    const response = await app.inject({ url: '/pressure' });
    expect([response.statusCode, response.json().code, response.headers['retry-after']]).toEqual([503, 'PUB_ERR_OVERLOADED', '9']);
  });
});

describe('frameworkErrorHandler', () => {
  it('answers a URL Fastify cannot decode with 400 problem+json', async () => {
    const app = Fastify({ frameworkErrors: frameworkErrorHandler });
    registerProblemHandlers(app, 1);
    app.get('/streams/:id/latest', async () => 'latest');
    const response = await app.inject({ url: '/streams/%E0%A4%A/latest' });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json(;|$)/);
    expect(response.json()).toMatchObject({ code: 'PUB_ERR_BAD_REQUEST', status: 400, instance: '/streams/%E0%A4%A/latest' });
    await app.close();
  });
});

describe('clientErrorHandler', () => {
  /** A socket that keeps what is written to it. */
  function fakeSocket(writable = true) {
    const socket = { writable, written: '', destroyed: false, end: (text: string) => void (socket.written += text), destroy: () => void (socket.destroyed = true) };
    return socket;
  }

  /** The raw answer, split into its status line, headers and problem body. */
  function answer(code: string | undefined) {
    const socket = fakeSocket();
    clientErrorHandler(Object.assign(new Error('parse error'), { code }), socket as unknown as Socket);
    const [head, body] = socket.written.split('\r\n\r\n') as [string, string];
    const [statusLine, ...headers] = head.split('\r\n');
    return { statusLine, headers, body, problem: JSON.parse(body) as Record<string, unknown> };
  }

  it('answers bytes the HTTP parser refuses with 400 problem+json and closes the connection', () => {
    const { statusLine, headers, body, problem } = answer('HPE_INVALID_HEADER_TOKEN');
    expect(statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(headers).toEqual(['Content-Type: application/problem+json', `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close']);
    expect(problem).toEqual({ type: 'urn:rdf-stream:error:PUB_ERR_BAD_REQUEST', title: 'Bad request', status: 400, code: 'PUB_ERR_BAD_REQUEST', detail: 'Malformed HTTP request' });
  });

  it('answers oversized headers with 431, and a request not received in time with 408', () => {
    const tooLarge = answer('HPE_HEADER_OVERFLOW');
    expect(tooLarge.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(tooLarge.problem).toMatchObject({ status: 431, code: 'PUB_ERR_BAD_REQUEST' });
    const timeout = answer('ERR_HTTP_REQUEST_TIMEOUT');
    expect(timeout.statusLine).toBe('HTTP/1.1 408 Request Timeout');
    expect(timeout.problem).toMatchObject({ status: 408, code: 'PUB_ERR_REQUEST_TIMEOUT' });
  });

  it('never quotes the parser\'s error', () => {
    const socket = fakeSocket();
    clientErrorHandler(Object.assign(new Error('secret at /etc/credentials'), { code: 'HPE_INVALID_METHOD' }), socket as unknown as Socket);
    expect(socket.written).not.toMatch(INTERNALS);
  });

  it('only destroys a socket it can no longer write to', () => {
    const socket = fakeSocket(false);
    clientErrorHandler(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), socket as unknown as Socket);
    expect([socket.destroyed, socket.written]).toEqual([true, '']);
  });
});
