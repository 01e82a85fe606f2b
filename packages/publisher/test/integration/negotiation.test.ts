/**
 * Content negotiation on every RDF document route, on a real socket (so `/latest` goes through
 * the polling fast path) and through Fastify (`inject`, the path of long-polls): media-type
 * parameters other than `q` never defeat negotiation (issue 28), and a charset we do not send
 * is refused with 406.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readProblem } from '../support/problem.js';
import { startTestPublisher, type TestPublisher } from '../../src/testing.js';

let running: TestPublisher;
let routes: Record<string, string>;

beforeAll(async () => {
  running = await startTestPublisher({ flags: ['--page-elements', '2'] });
  for (let i = 0; i < 3; i++) await running.push();
  const stream = `/streams/${running.hub.definition.id}`;
  const epoch = running.hub.log.epoch;
  routes = {
    catalogue: '/streams',
    descriptor: stream,
    latest: `${stream}/latest`,
    element: `${stream}/elements/${epoch}-1`,
    'history root': `${stream}/history`,
    'history page': `${stream}/history/${epoch}-1`,
    'notification service description': '/notifications',
    'notification channel description': '/notifications/eventsource',
  };
});
afterAll(() => running.close());

const acceptedWithParameters = [
  ['application/ld+json;profile="http://www.w3.org/ns/json-ld#compacted"', 'application/ld+json'],
  ['application/ld+json;profile="http://www.w3.org/ns/json-ld#expanded"', 'application/ld+json'],
  ['application/ld+json; profile="urn:example:a,b;c"; q=0.9, text/turtle;q=0.1', 'application/ld+json'],
  ['text/turtle;charset=utf-8', 'text/turtle'],
  ['application/n-quads; charset="UTF-8"', 'application/n-quads'],
  ['text/turtle;charset=iso-8859-1, application/trig;q=0.2', 'application/trig'],
] as const;

/** The media type of a Content-Type value (JSON-LD is sent with or without `charset=utf-8`, both UTF-8). */
const mediaTypeOf = (contentType: string | null | undefined) => contentType?.split(';')[0];

describe('every RDF document route, on a real socket', () => {
  it.each(acceptedWithParameters)('Accept: %s → %s', async (accept, mediaType) => {
    for (const [name, path] of Object.entries(routes)) {
      const response = await fetch(`${running.url}${path}`, { headers: { accept } });
      expect(response.status, name).toBe(200);
      expect(mediaTypeOf(response.headers.get('content-type')), name).toBe(mediaType);
      const body = await response.text();
      if (mediaType === 'application/ld+json') expect(() => JSON.parse(body), name).not.toThrow();
      else expect(body.length, name).toBeGreaterThan(0);
    }
  });

  it.each(['text/turtle;charset=iso-8859-1', 'application/ld+json;charset=utf-16'])('Accept: %s → 406 (we send UTF-8 only)', async (accept) => {
    for (const [name, path] of Object.entries(routes)) {
      const response = await fetch(`${running.url}${path}`, { headers: { accept } });
      expect(response.status, name).toBe(406);
      const problem = await readProblem(response);
      expect(problem.code, name).toBe('PUB_ERR_NOT_ACCEPTABLE');
      expect(problem.detail, name).toContain('UTF-8 only');
    }
  });

  it('the event stream takes an Accept with parameters (it chooses by ?format=, not Accept)', async () => {
    const aborter = new AbortController();
    const response = await fetch(`${running.url}${routes.latest!.replace(/latest$/, 'events')}`, {
      headers: { accept: 'text/event-stream; charset=utf-8' },
      signal: aborter.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    aborter.abort();
  });

  it('a browser-like Accept with a profile on the RDF type still gets RDF at the stream IRI', async () => {
    const response = await fetch(`${running.url}${routes.descriptor}`, {
      headers: { accept: 'application/ld+json;profile="http://www.w3.org/ns/json-ld#compacted", text/html;q=0.9' },
    });
    expect(mediaTypeOf(response.headers.get('content-type'))).toBe('application/ld+json');
  });
});

describe('GET /latest through Fastify (inject)', () => {
  it.each(acceptedWithParameters)('Accept: %s → %s', async (accept, mediaType) => {
    const response = await running.publisher.app.inject({ url: routes.latest!, headers: { accept } });
    expect(response.statusCode).toBe(200);
    expect(mediaTypeOf(String(response.headers['content-type']))).toBe(mediaType);
  });
});
