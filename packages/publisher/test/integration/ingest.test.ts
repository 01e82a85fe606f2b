import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readProblem as readProblemBody } from '../support/problem.js';
import { elementIds, freePort, openSse, type SseConnection, startTestPublisher, type TestPublisher } from '../../src/testing.js';

/** For state no event announces: checked every 10 ms, with a deadline for a broken server, not a measure of speed. */
const patience = { timeout: 30_000, interval: 10 };

const TOKEN = 'sensors-token-0123456789abcdef';
const OTHER_TOKEN = 'other-token-0123456789abcdefgh';
const SOSA = 'http://www.w3.org/ns/sosa/';

const configYaml = `
streams:
  - id: sensors
    title: Sensors pushing their observations
    source: { kind: ingest, tokenEnv: SENSORS_TOKEN }
  - id: other
    title: Another ingest stream
    source: { kind: ingest, tokenEnv: OTHER_TOKEN }
  - id: parking
    title: Simulated parking
    intervalSeconds: 60
    source: { kind: simulator, facilities: 2 }
`;

/** A Turtle body of `count` SOSA observations (relative IRIs resolve against the stream). */
function observationsTurtle(count: number, value = 21.5): string {
  const lines = ['@prefix sosa: <http://www.w3.org/ns/sosa/>.', '@prefix xsd: <http://www.w3.org/2001/XMLSchema#>.'];
  for (let i = 0; i < count; i++) {
    lines.push(
      `<obs/${i}> a sosa:Observation; sosa:madeBySensor <https://example.org/sensors/t${i}>;`,
      `  sosa:observedProperty <https://example.org/properties/temperature>; sosa:hasFeatureOfInterest <https://example.org/rooms/r${i}>;`,
      `  sosa:hasSimpleResult ${value + i}; sosa:resultTime "2026-11-22T10:00:00.000Z"^^xsd:dateTime.`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Checks status, media type and code of a problem answer; returns its members. */
async function readProblem(response: Response, status: number, code: string): Promise<Record<string, unknown>> {
  const problem = await readProblemBody(response);
  expect({ status: response.status, code: problem.code, type: problem.type }).toEqual({ status, code, type: `urn:rdf-stream:error:${code}` });
  return problem as unknown as Record<string, unknown>;
}

let running: TestPublisher;
let stream: string;
let sse: SseConnection;
let remoteContextServer: Server;
let remoteContextConnections = 0;
let remoteContextUrl: string;

const post = (body: string | Buffer, headers: Record<string, string> = {}, id = 'sensors') =>
  fetch(`${running.url}/streams/${id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/turtle', ...headers },
    body,
  });

/** The epoch of the sensors stream's log: the first part of its element ids. */
const sensorsEpoch = () => running.publisher.hubs.get('sensors')!.log.epoch;

async function state() {
  const latest = await fetch(`${stream}/latest`, { headers: { accept: 'text/turtle' } });
  const hub = running.publisher.hubs.get('sensors')!;
  return { etag: latest.headers.get('etag'), status: latest.status, seq: hub.log.latestSeq };
}

beforeAll(async () => {
  remoteContextServer = createServer((_request, response) => response.end('{"@context": {}}'));
  remoteContextServer.on('connection', () => remoteContextConnections++);
  const port = await freePort();
  await new Promise<void>((resolve) => remoteContextServer.listen(port, '127.0.0.1', resolve));
  remoteContextUrl = `http://127.0.0.1:${port}/context.jsonld`;
  running = await startTestPublisher({
    config: configYaml,
    env: { SENSORS_TOKEN: TOKEN, OTHER_TOKEN },
    flags: ['--ingest-max-body-bytes', '65536', '--ingest-max-triples', '400', '--ingest-max-literal-chars', '1000', '--ingest-max-iri-chars', '200', '--idempotency-keys-retained', '3'],
  });
  stream = `${running.url}/streams/sensors`;
  sse = await openSse(`${stream}/events`);
});

afterAll(async () => {
  sse?.close();
  await running?.close();
  await new Promise((resolve) => remoteContextServer.close(resolve));
});

describe('POST /streams/{id} (ingest)', () => {
  it('appends one element, answers 201 with its URL and sequence number, and broadcasts it', async () => {
    const response = await post(observationsTurtle(3));
    expect(response.status).toBe(201);
    const body = (await response.json()) as { id: string; seq: number; element: string; generatedAt: string };
    const id = `${sensorsEpoch()}-1`;
    expect(body.id).toBe(id);
    expect(body.seq).toBe(1);
    expect(body.element).toBe(`${stream}/elements/${id}`);
    expect(response.headers.get('location')).toBe(body.element);
    const [event] = await sse.waitForEvents(1);
    expect(event?.id).toBe(id);
    expect(event?.data).toContain('https://example.org/sensors/t2');
    const latest = await (await fetch(`${stream}/latest`, { headers: { accept: 'application/n-quads' } })).text();
    // The body's triples are in the element's graph; relative IRIs resolved against the stream.
    expect(latest).toContain(`<${stream}/obs/0> <${SOSA}madeBySensor> <https://example.org/sensors/t0> <${stream}/elements/${id}> .`);
    expect(latest).toContain(`<${stream}/elements/${id}> <http://www.w3.org/ns/prov#generatedAtTime>`);
    const element = await fetch(body.element, { headers: { accept: 'application/n-quads' } });
    expect(element.status).toBe(200);
    // /latest adds the default-graph copy of the triples (for plain SPARQL); the element itself follows it.
    const elementDocument = await element.text();
    expect(latest.endsWith(elementDocument)).toBe(true);
    expect(latest).toContain(`<${stream}/obs/0> <${SOSA}madeBySensor> <https://example.org/sensors/t0> .`);
  });

  it.each([
    ['application/n-triples', `<https://example.org/o/1> <${SOSA}madeBySensor> <https://example.org/s/1> .
<https://example.org/o/1> <${SOSA}observedProperty> <https://example.org/p> .
<https://example.org/o/1> <${SOSA}hasFeatureOfInterest> <https://example.org/f> .
<https://example.org/o/1> <${SOSA}hasSimpleResult> "4"^^<http://www.w3.org/2001/XMLSchema#integer> .
<https://example.org/o/1> <${SOSA}resultTime> "2026-11-22T10:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .
`],
    ['application/n-quads', `<https://example.org/o/2> <${SOSA}madeBySensor> <https://example.org/s/1> <https://example.org/g> .
<https://example.org/o/2> <${SOSA}observedProperty> <https://example.org/p> <https://example.org/g> .
<https://example.org/o/2> <${SOSA}hasFeatureOfInterest> <https://example.org/f> <https://example.org/g> .
<https://example.org/o/2> <${SOSA}hasSimpleResult> "5"^^<http://www.w3.org/2001/XMLSchema#integer> <https://example.org/g> .
<https://example.org/o/2> <${SOSA}resultTime> "2026-11-22T10:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> <https://example.org/g> .
`],
    ['application/trig', `@prefix sosa: <${SOSA}>. @prefix xsd: <http://www.w3.org/2001/XMLSchema#>.
<https://example.org/g> { <https://example.org/o/3> sosa:madeBySensor <https://example.org/s/1>; sosa:observedProperty <https://example.org/p>;
  sosa:hasFeatureOfInterest <https://example.org/f>; sosa:hasSimpleResult 6; sosa:resultTime "2026-11-22T10:00:00Z"^^xsd:dateTime. }`],
    ['Text/Turtle ; charset=UTF-8', observationsTurtle(1)],
  ])('accepts %s', async (type, body) => {
    const before = (await state()).seq;
    const response = await post(body, { 'content-type': type });
    expect(response.status).toBe(201);
    expect(((await response.json()) as { seq: number }).seq).toBe(before + 1);
  });

  it('accepts JSON-LD that uses the bundled context, and gzip-encoded bodies', async () => {
    const document = {
      '@context': `${running.url}/contexts/sosa-stream.jsonld`,
      '@id': 'https://example.org/o/jsonld',
      '@type': 'Observation',
      madeBySensor: 'https://example.org/s/1',
      observedProperty: 'https://example.org/p',
      hasFeatureOfInterest: 'https://example.org/f',
      hasSimpleResult: 7,
      resultTime: '2026-11-22T10:00:00Z',
    };
    expect((await post(JSON.stringify(document), { 'content-type': 'application/ld+json' })).status).toBe(201);
    expect((await post(gzipSync(observationsTurtle(2)), { 'content-encoding': 'gzip' })).status).toBe(201);
  });

  describe('refuses bad input with problem+json and leaves the stream unchanged', () => {
    const bigLiteral = `@prefix sosa: <${SOSA}>. <o> a sosa:Observation; sosa:madeBySensor <s>; sosa:observedProperty <p>; sosa:hasFeatureOfInterest <f>; sosa:hasSimpleResult "${'x'.repeat(1001)}"; sosa:resultTime "2026-11-22T10:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>.`;
    const longIri = `@prefix sosa: <${SOSA}>. <o> a sosa:Observation; sosa:madeBySensor <https://example.org/${'s'.repeat(200)}>.`;
    const cases: Array<[string, () => Promise<Response>, number, string, ((problem: Record<string, unknown>) => void)?]> = [
      ['malformed Turtle', () => post(`${observationsTurtle(1)}<a> <b> "unterminated .\n`), 400, 'PUB_ERR_RDF_SYNTAX', (p) => expect(p.line).toBe(6)],
      ['malformed JSON-LD', () => post('{\n  "@id": "https://example.org/x",\n  "a": }', { 'content-type': 'application/ld+json' }), 400, 'PUB_ERR_RDF_SYNTAX', (p) => expect(p.line).toBe(3)],
      ['a JSON-LD term that expands to nothing (it would be dropped silently)', () => post(JSON.stringify({ '@id': 'https://example.org/x', temperature: 21, 'https://example.org/p': 1 }), { 'content-type': 'application/ld+json' }), 400, 'PUB_ERR_RDF_SYNTAX', (p) => expect(p.detail).toMatch(/Dropping property/)],
      ['a shape violation', () => post(`@prefix sosa: <${SOSA}>. <o> a sosa:Observation; sosa:hasSimpleResult 1.`), 422, 'PUB_ERR_SHAPE_VIOLATION', (p) => {
        const violations = p.violations as Array<{ focusNode: string; path?: string; message: string }>;
        expect(violations.map((v) => v.path)).toEqual(expect.arrayContaining([`${SOSA}madeBySensor`, `${SOSA}resultTime`]));
        expect(violations.every((v) => v.focusNode === `${stream}/o` && v.message.length > 0)).toBe(true);
      }],
      ['an empty document', () => post('@prefix sosa: <http://www.w3.org/ns/sosa/>.\n'), 422, 'PUB_ERR_EMPTY_ELEMENT'],
      ['a body above the limit', () => post(`# ${'x'.repeat(70_000)}\n${observationsTurtle(1)}`), 413, 'PUB_ERR_BODY_TOO_LARGE'],
      ['a chunked body above the limit (no Content-Length: counted while read)', () => fetch(`${running.url}/streams/sensors`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/turtle' },
        body: new ReadableStream({
          start(controller) {
            for (let i = 0; i < 1_000; i++) controller.enqueue(new TextEncoder().encode(`# ${'x'.repeat(4_000)}\n`));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit), 413, 'PUB_ERR_BODY_TOO_LARGE'],
      ['a body above the limit after decompression', () => post(gzipSync(`# ${' '.repeat(5_000_000)}\n`), { 'content-encoding': 'gzip' }), 413, 'PUB_ERR_BODY_TOO_LARGE'],
      ['too many triples', () => post(observationsTurtle(81)), 413, 'PUB_ERR_ELEMENT_TOO_LARGE', (p) => expect(p.detail).toMatch(/486 triples; the limit is 400/)],
      ['a literal too long', () => post(bigLiteral), 413, 'PUB_ERR_ELEMENT_TOO_LARGE', (p) => expect(p.detail).toMatch(/literal/)],
      ['an IRI too long', () => post(longIri), 413, 'PUB_ERR_ELEMENT_TOO_LARGE', (p) => expect(p.detail).toMatch(/IRI/)],
      ['text/plain', () => post(observationsTurtle(1), { 'content-type': 'text/plain' }), 415, 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE'],
      ['a look-alike type', () => post(observationsTurtle(1), { 'content-type': 'text/turtlex' }), 415, 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE'],
      ['two types', () => post(observationsTurtle(1), { 'content-type': 'text/turtle, application/ld+json' }), 415, 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE'],
      ['another charset', () => post(observationsTurtle(1), { 'content-type': 'text/turtle; charset=utf-16' }), 415, 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE'],
      ['an unknown parameter', () => post(observationsTurtle(1), { 'content-type': 'text/turtle;q=1' }), 415, 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE'],
      ['space inside the type', () => post(observationsTurtle(1), { 'content-type': 'text/ turtle' }), 415, 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE'],
      ['an unknown content coding', () => post(observationsTurtle(1), { 'content-encoding': 'compress' }), 415, 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE'],
      ['no token', () => post(observationsTurtle(1), { authorization: '' }), 401, 'PUB_ERR_UNAUTHORIZED'],
      ['a wrong token', () => post(observationsTurtle(1), { authorization: 'Bearer not-the-token-0123456789' }), 401, 'PUB_ERR_UNAUTHORIZED'],
      ["another stream's token", () => post(observationsTurtle(1), { authorization: `Bearer ${OTHER_TOKEN}` }), 403, 'PUB_ERR_FORBIDDEN'],
      ['a remote @context', () => post(JSON.stringify({ '@context': remoteContextUrl, '@id': 'https://example.org/x', 'https://example.org/p': 1 }), { 'content-type': 'application/ld+json' }), 400, 'PUB_ERR_REMOTE_CONTEXT'],
      ['a nested remote @context', () => post(JSON.stringify({ '@context': {}, '@graph': [{ '@context': [remoteContextUrl], '@id': 'https://example.org/x' }] }), { 'content-type': 'application/ld+json' }), 400, 'PUB_ERR_REMOTE_CONTEXT'],
      ['@import', () => post(JSON.stringify({ '@context': { '@import': remoteContextUrl }, '@id': 'https://example.org/x' }), { 'content-type': 'application/ld+json' }), 400, 'PUB_ERR_REMOTE_CONTEXT'],
      ['a __proto__ key', () => post('{"@id": "https://example.org/x", "__proto__": {"polluted": true}}', { 'content-type': 'application/ld+json' }), 400, 'PUB_ERR_FORBIDDEN_KEY'],
      ['invalid UTF-8', () => post(Buffer.from([0x3c, 0x61, 0x3e, 0xff, 0xfe])), 400, 'PUB_ERR_RDF_SYNTAX'],
    ];

    it.each(cases)('%s', async (_name, send, status, code, check) => {
      const before = await state();
      const response = await send();
      const problem = await readProblem(response, status, code);
      check?.(problem);
      expect(await state()).toEqual(before);
    });

    it('sends no bad input to SSE subscribers: the next event is the next good element', async () => {
      const seen = sse.events.length;
      const response = await post(observationsTurtle(1, 99));
      const { id, seq } = (await response.json()) as { id: string; seq: number };
      const events = await sse.waitForEvents(seen + 1);
      expect(elementIds(events.slice(seen - 1))).toEqual([`${sensorsEpoch()}-${seq - 1}`, id]);
      expect(events.at(-1)?.data).toContain('99');
    });

    it('never fetched the remote context', () => {
      expect(remoteContextConnections).toBe(0);
    });

    it('says how to authenticate', async () => {
      const missing = await post(observationsTurtle(1), { authorization: '' });
      expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="rdf-stream"');
      const wrong = await post(observationsTurtle(1), { authorization: 'Bearer not-the-token-0123456789' });
      expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="rdf-stream", error="invalid_token"');
      const unsupported = await post(observationsTurtle(1), { 'content-type': 'text/plain' });
      expect(unsupported.headers.get('accept-post')).toContain('text/turtle');
    });

    it('refuses POST on a stream fed by another source', async () => {
      const response = await post(observationsTurtle(1), {}, 'parking');
      await readProblem(response, 405, 'PUB_ERR_METHOD_NOT_ALLOWED');
      expect(response.headers.get('allow')).toBe('GET, HEAD');
    });
  });

  describe('Idempotency-Key', () => {
    it('answers a retried request with the first answer and creates no second element', async () => {
      const body = observationsTurtle(2, 50);
      const first = await post(body, { 'idempotency-key': 'retry-me-1' });
      expect(first.status).toBe(201);
      const firstBody = await first.text();
      const before = await state();
      const retried = await post(body, { 'idempotency-key': 'retry-me-1' });
      expect(retried.status).toBe(201);
      expect(retried.headers.get('idempotent-replayed')).toBe('true');
      expect(retried.headers.get('location')).toBe(first.headers.get('location'));
      expect(await retried.text()).toBe(firstBody);
      expect(await state()).toEqual(before);
    });

    it('refuses the same key with another body, and an invalid key', async () => {
      await post(observationsTurtle(1, 1), { 'idempotency-key': 'retry-me-2' });
      const before = await state();
      await readProblem(await post(observationsTurtle(1, 2), { 'idempotency-key': 'retry-me-2' }), 422, 'PUB_ERR_IDEMPOTENCY_KEY_REUSED');
      await readProblem(await post(observationsTurtle(1, 2), { 'idempotency-key': 'has space' }), 400, 'PUB_ERR_INVALID_IDEMPOTENCY_KEY');
      expect(await state()).toEqual(before);
    });

    it('keeps the answers of the last idempotencyKeysRetained keys only', async () => {
      const seqOf = async (response: Response) => ((await response.json()) as { seq: number }).seq;
      const first: Record<string, number> = {};
      for (const key of ['limit-a', 'limit-b', 'limit-c', 'limit-d']) {
        first[key] = await seqOf(await post(observationsTurtle(1, 7), { 'idempotency-key': key }));
      }
      // 3 retained: limit-a was evicted by limit-d, so its retry is a new request.
      const replayed = await post(observationsTurtle(1, 7), { 'idempotency-key': 'limit-d' });
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
      expect(await seqOf(replayed)).toBe(first['limit-d']);
      const evicted = await post(observationsTurtle(1, 7), { 'idempotency-key': 'limit-a' });
      expect(evicted.headers.get('idempotent-replayed')).toBeNull();
      expect(await seqOf(evicted)).toBe(first['limit-d']! + 1);
    });

    it('answers 409 to a retry sent while the first request is still in progress', async () => {
      const body = observationsTurtle(1, 3);
      const { port } = new URL(running.url);
      // The first request sends its headers and half its body, and waits.
      const first = connect(Number(port), '127.0.0.1');
      await once(first, 'connect');
      let firstAnswer = '';
      first.setEncoding('utf8').on('data', (chunk: string) => (firstAnswer += chunk));
      first.write(
        `POST /streams/sensors HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: text/turtle\r\n` +
          `Idempotency-Key: in-flight\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, 40)}`,
      );
      await vi.waitUntil(() => running.publisher.ingest.get('sensors')?.idempotency.get('in-flight')?.state === 'pending', patience);
      const before = await state();
      const retry = await post(body, { 'idempotency-key': 'in-flight' });
      await readProblem(retry, 409, 'PUB_ERR_IDEMPOTENCY_KEY_IN_USE');
      expect(retry.headers.get('retry-after')).toBe('1');
      expect(await state()).toEqual(before);
      // The first one completes, and a retry now gets its answer.
      first.write(body.slice(40));
      await once(first, 'close'); // Connection: close, once answered
      expect(firstAnswer).toMatch(/^HTTP\/1\.1 201 /);
      const replayed = await post(body, { 'idempotency-key': 'in-flight' });
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    });

    it('lets a refused request be corrected and sent again with the same key', async () => {
      await readProblem(await post('<broken', { 'idempotency-key': 'fix-me' }), 400, 'PUB_ERR_RDF_SYNTAX');
      expect((await post(observationsTurtle(1), { 'idempotency-key': 'fix-me' })).status).toBe(201);
    });
  });

  it('shows the ingest source in /health and never the token', async () => {
    const health = (await (await fetch(`${running.url}/health`)).json()) as {
      streams: Record<string, { source: { kind: string; state: string } }>;
    };
    expect(health.streams.sensors?.source).toMatchObject({ kind: 'ingest', state: 'ok' });
    expect(health.streams.parking?.source).toMatchObject({ kind: 'simulator', state: 'ok' });
    expect(JSON.stringify(running.config)).not.toContain(TOKEN);
  });
});
