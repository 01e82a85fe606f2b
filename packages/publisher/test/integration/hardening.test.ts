/**
 * Security and robustness regressions. Each case names the weakness it prevents.
 */
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { formatNames } from '@rdf-stream/protocol';
import { MAX_ECHOED_CHARS, TRUNCATION_MARK } from '../../src/errors.js';
import { NegotiationCache } from '../../src/render/headers/negotiate.js';
import { sseFrame } from '../../src/render/sse-frame.js';
import { type Problem, readProblem } from '../support/problem.js';
import { parseRdf } from '../support/rdf.js';
import { elementIds, openSse, sampleObservations, startTestPublisher, type TestPublisher } from '../../src/testing.js';
import { startIngestPublisher } from '../support/ingest-publisher.js';

const run = promisify(execFile);

let running: TestPublisher | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const parseFrames = (text: string) => {
  const events: EventSourceMessage[] = [];
  createParser({ onEvent: (event) => events.push(event) }).feed(text);
  return events;
};

/** Sends raw bytes and returns the raw response (for requests fetch refuses to send). */
async function rawRequest(port: number, bytes: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  socket.write(bytes);
  let response = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    response += chunk;
    if (response.includes('\r\n\r\n')) socket.end();
  });
  await new Promise((resolve) => socket.on('close', resolve));
  return response;
}

const injection = 'x\r\n\r\nid: 999\nevent: gap\r\ndata: forged\rretry: 1\n\0';

describe('SSE field injection', () => {
  it('CR, LF, CRLF in data can never start a field or an event of its own', () => {
    const events = parseFrames(sseFrame({ id: 5, data: injection }));
    expect(events).toHaveLength(1);
    expect(events[0]?.id).toBe('5');
    expect(events[0]?.event).toBeUndefined();
  });

  it('CR, LF or NUL in an id or event name is refused, not written', () => {
    for (const bad of ['1\n', '1\r', '1\0', 'a\r\nevent: x']) {
      expect(() => sseFrame({ id: bad })).toThrow(RangeError);
      expect(() => sseFrame({ event: bad })).toThrow(RangeError);
    }
  });

  it.each(formatNames)('observation values with CR/LF/NUL arrive as one %s event that parses back to the same literal', async (format) => {
    running = await startTestPublisher();
    const connection = await openSse(`${running.url}/streams/parking/events?format=${format}`);
    await running!.untilSubscribers(1);
    const observations = sampleObservations(running.hub.definition.iri, [1]).map((o) => ({ ...o, simpleResult: injection }));
    await running.push(observations);
    await running.push();
    const events = await connection.waitForEvents(2);
    const { epoch } = running.hub.log;
    expect(events.map((event) => [event.id, event.event])).toEqual([
      [`${epoch}-1`, undefined],
      [`${epoch}-2`, undefined],
    ]);
    const quads = await parseRdf(format, events[0]!.data);
    const result = quads.find((q) => q.predicate.value === 'http://www.w3.org/ns/sosa/hasSimpleResult');
    expect(result?.object.value).toBe(injection);
    connection.close();
  });
});

describe('malformed Last-Event-ID', () => {
  it.each(['abc', '-1', '1.5', '1e9', '0x10', '9'.repeat(40), '\u00b9\u00b2', '1,2', 'ABC-1', 'abc-0', 'abc-', '-abc-1', `${'a'.repeat(33)}-1`])(
    'header %j gets 400 problem+json and the server keeps serving',
    async (value) => {
      running ??= await startTestPublisher();
      const response = await fetch(`${running.url}/streams/parking/events`, { headers: { 'last-event-id': value } });
      expect(response.status).toBe(400);
      expect((await readProblem(response)).code).toBe('PUB_ERR_INVALID_EVENT_ID');
      expect((await fetch(`${running.url}/health`)).status).toBe(200);
    },
  );

  it('a repeated ?lastEventId parameter does not crash the route (first value wins)', async () => {
    running = await startTestPublisher();
    for (let index = 0; index < 3; index++) await running.push();
    const { epoch } = running.hub.log;
    const connection = await openSse(`${running.url}/streams/parking/events?lastEventId=${epoch}-1&lastEventId=zzz`);
    await connection.waitForEvents(2);
    expect(elementIds(connection.events)).toEqual([`${epoch}-2`, `${epoch}-3`]);
    connection.close();
  });

  it('control bytes in the raw header are answered with 400, never a crash', async () => {
    running = await startTestPublisher();
    const port = Number(new URL(running.url).port);
    const response = await rawRequest(port, 'GET /streams/parking/events HTTP/1.1\r\nHost: x\r\nLast-Event-ID: 1\x00\x01\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 400/);
    expect(response).toContain('application/problem+json');
    expect((await fetch(`${running.url}/health`)).status).toBe(200);
  });
});

describe('error bodies', () => {
  it('a 500 never carries the error message, a stack trace or a path', async () => {
    running = await startTestPublisher({
      healthCheck: async () => {
        throw new Error('secret at /etc/credentials');
      },
    });
    const response = await fetch(`${running.url}/health`);
    expect(response.status).toBe(500);
    const body = await response.text();
    expect(body).not.toMatch(/secret|credentials|\/etc|\bat\b.*:\d+:\d+|node_modules|\.ts/);
    expect(JSON.parse(body)).toMatchObject({ code: 'PUB_ERR_INTERNAL', status: 500 });
  });

  it('a malformed URL gets 400 problem+json', async () => {
    running = await startTestPublisher();
    const port = Number(new URL(running.url).port);
    const response = await rawRequest(port, 'GET /streams/%E0%A4%A/latest HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 (400|404)/);
    expect(response).toContain('application/problem+json');
  });
});

describe('lookups by user-supplied names', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])('stream id %j is simply unknown', async (id) => {
    running ??= await startTestPublisher();
    const response = await fetch(`${running.url}/streams/${id}/latest`);
    expect(response.status).toBe(404);
  });

  it.each(['__proto__', 'constructor', 'toString'])('ontology document and sensor %j are simply unknown', async (name) => {
    running ??= await startTestPublisher();
    await running.push();
    const document = await fetch(`${running.url}/ontologies/${name}`);
    expect([document.status, (await readProblem(document)).code]).toEqual([404, 'PUB_ERR_ROUTE_NOT_FOUND']);
    const sensor = await fetch(`${running.streamUrl}/sensors/${name}`);
    expect([sensor.status, (await readProblem(sensor)).code]).toEqual([404, 'PUB_ERR_RESOURCE_NOT_FOUND']);
  });

  it.each(['../../package.json', '%2e%2e/%2e%2e/package.json', '..%2f..%2fpackage.json', 'vocab/../../../package.json'])(
    'path traversal below /ontologies/ (%s) reads no file: the documents are looked up, not opened',
    async (path) => {
      running ??= await startTestPublisher();
      const response = await rawRequest(Number(new URL(running.url).port), `GET /ontologies/${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(response).toMatch(/^HTTP\/1\.1 404 /);
      expect(response).not.toContain('"version"');
    },
  );

  it.each(['__proto__', 'constructor', 'toString'])('format %j is rejected', async (format) => {
    running ??= await startTestPublisher();
    const response = await fetch(`${running.url}/streams/parking/events?format=${format}`);
    expect(response.status).toBe(400);
  });
});

describe('resource exhaustion', () => {
  it('distinct Accept headers cannot grow the negotiation memo beyond its limit', () => {
    const cache = new NegotiationCache(100);
    for (let index = 0; index < 5_000; index++) {
      cache.format(`application/x-${index}, text/turtle;q=0.1`);
      cache.encoding(`x-${index}, gzip`);
    }
    expect(cache.size).toBe(200);
  });

  it('a crowd connecting at once is queued by the kernel up to listenBacklog (not Node\'s 511) instead of having its SYNs dropped', async () => {
    running = await startTestPublisher({ flags: ['--listen-backlog', '1234'] });
    const port = Number(new URL(running.url).port);
    // For a listening socket, ss shows in Send-Q the backlog the kernel applies.
    const { stdout } = await run('ss', ['-ltnH', `sport = :${port}`]);
    expect(stdout.trim().split(/\s+/)[2]).toBe('1234');
  });

  it('Prefer: wait above maxLongPollWaitSeconds is capped', async () => {
    running = await startTestPublisher({ flags: ['--max-long-poll-wait-seconds', '1'] });
    await running.push();
    const url = `${running.url}/streams/parking/latest`;
    const etag = (await fetch(url)).headers.get('etag')!;
    const response = await fetch(url, { headers: { 'if-none-match': etag, prefer: 'wait=999999' } });
    expect(response.status).toBe(304);
  });
});

describe('slow clients (Slowloris)', () => {
  const token = 'slow-token-0123456789abcdefgh';
  const turtle = '<https://example.org/o> <https://example.org/p> "1".\n';
  let ingest: TestPublisher | undefined;
  afterEach(async () => {
    await ingest?.close();
    ingest = undefined;
  });

  /** Sends `bytes` and never more; resolves with everything the server answers before closing. */
  async function sendAndStall(port: number, bytes: string): Promise<string> {
    const socket = connect(port, '127.0.0.1');
    socket.write(bytes);
    let response = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (response += chunk));
    await new Promise((resolve) => socket.on('close', resolve));
    return response;
  }

  const problemOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { code: string; status: number };

  it('a body shorter than its Content-Length is answered 408 after requestTimeoutMs, and its Idempotency-Key is released', async () => {
    ingest = await startIngestPublisher(token, ['--headers-timeout-ms', '1000', '--request-timeout-ms', '1000']);
    const port = Number(new URL(ingest.url).port);
    const raw = await sendAndStall(
      port,
      `POST /streams/sensors HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: text/turtle\r\n` +
        `Idempotency-Key: slow-1\r\nContent-Length: 1000\r\n\r\n${turtle}`,
    );
    expect(raw).toMatch(/^HTTP\/1\.1 408 /);
    expect(problemOf(raw)).toMatchObject({ status: 408, code: 'PUB_ERR_REQUEST_TIMEOUT' });
    // The abandoned request did not keep the key: the same request, sent whole, is taken (once
    // the publisher has seen the connection close: until then it answers 409 in use).
    const resend = () =>
      fetch(`${ingest!.url}/streams/sensors`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/turtle', 'idempotency-key': 'slow-1' },
        body: turtle,
      });
    let response = await resend();
    for (let attempt = 0; response.status === 409 && attempt < 100; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      response = await resend();
    }
    expect(response.status).toBe(201);
    expect(ingest.publisher.hubs.get('sensors')!.log.latestSeq).toBe(1);
  });

  it('headers that never end are answered 408 after headersTimeoutMs', async () => {
    ingest = await startIngestPublisher(token, ['--headers-timeout-ms', '1000', '--request-timeout-ms', '5000']);
    const raw = await sendAndStall(Number(new URL(ingest.url).port), 'GET /streams/sensors/latest HTTP/1.1\r\nHost: x\r\nX-Slow: a');
    expect(problemOf(raw)).toMatchObject({ status: 408, code: 'PUB_ERR_REQUEST_TIMEOUT' });
  });

  it('the request timeouts never cut an SSE stream or a long-poll (they bound receiving the request only)', async () => {
    ingest = await startIngestPublisher(token, ['--headers-timeout-ms', '1000', '--request-timeout-ms', '1000', '--heartbeat-ms', '1000']);
    const post = () =>
      fetch(`${ingest!.url}/streams/sensors`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/turtle' },
        body: turtle,
      });
    expect((await post()).status).toBe(201);
    const sse = await openSse(`${ingest.url}/streams/sensors/events`);
    const latest = `${ingest.url}/streams/sensors/latest`;
    const etag = (await fetch(latest)).headers.get('etag')!;
    // A long-poll held three times the timeouts ends as long-polls do: 304, nothing new.
    const longPoll = await fetch(latest, { headers: { 'if-none-match': etag, prefer: 'wait=3' } });
    expect(longPoll.status).toBe(304);
    // Meanwhile the stream stayed open: heartbeats went on (beyond a comment the preamble may hold).
    expect(sse.comments.length).toBeGreaterThanOrEqual(3);
    expect((await post()).status).toBe(201);
    await sse.waitForEvents(1);
    expect(elementIds(sse.events)).toHaveLength(1);
    sse.close();
  });
});

describe('CORS: ingest and /metrics closed to other origins', () => {
  const token = 'cors-token-0123456789abcdefgh';
  let publisher: TestPublisher | undefined;
  afterEach(async () => {
    await publisher?.close();
    publisher = undefined;
  });
  const start = async (flags: string[] = []) => {
    publisher = await startIngestPublisher(token, flags);
    return publisher.publisher.app;
  };
  const preflight = (app: Awaited<ReturnType<typeof start>>, url: string, origin: string, method: string, headers: string) =>
    app.inject({
      method: 'OPTIONS',
      url,
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
    });
  const ingest = (app: Awaited<ReturnType<typeof start>>, origin: string) =>
    app.inject({
      method: 'POST',
      url: '/streams/sensors',
      headers: { origin, authorization: `Bearer ${token}`, 'content-type': 'text/turtle' },
      payload: '<https://example.org/o> <https://example.org/p> "1".\n',
    });

  it('by default, a page of another origin is not allowed to ingest with a token it holds, nor to read /metrics', async () => {
    const app = await start();
    const asked = await preflight(app, '/streams/sensors', 'https://evil.example', 'POST', 'authorization, content-type');
    expect(asked.headers['access-control-allow-origin']).toBeUndefined();
    expect(asked.headers['access-control-allow-headers']).toBeUndefined();
    const posted = await ingest(app, 'https://evil.example');
    expect(posted.statusCode).toBe(201);
    expect(posted.headers['access-control-allow-origin']).toBeUndefined();
    const metrics = await app.inject({ url: '/metrics', headers: { origin: 'https://evil.example' } });
    expect(metrics.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('reads stay open to every origin, but a preflight is granted only the headers a reader sends, not any it asks for', async () => {
    const app = await start();
    const asked = await preflight(app, '/streams/sensors/events', 'https://any.example', 'GET', 'last-event-id, authorization, x-anything');
    expect(asked.statusCode).toBe(204);
    expect(asked.headers['access-control-allow-origin']).toBe('*');
    const allowed = String(asked.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/);
    expect(allowed).toContain('last-event-id');
    expect(allowed).not.toContain('authorization');
    expect(allowed).not.toContain('x-anything');
    const descriptor = await app.inject({ url: '/streams/sensors', headers: { origin: 'https://any.example' } });
    expect(descriptor.headers['access-control-allow-origin']).toBe('*');
  });

  it('corsIngestOrigins opens ingest and /metrics to the origins it names, and only to them', async () => {
    const app = await start(['--cors-ingest-origins', 'https://dash.example, https://ops.example']);
    const asked = await preflight(app, '/streams/sensors', 'https://dash.example', 'POST', 'authorization, content-type, idempotency-key');
    expect(asked.statusCode).toBe(204);
    expect(asked.headers['access-control-allow-origin']).toBe('https://dash.example');
    expect(String(asked.headers.vary)).toMatch(/origin/i);
    expect(String(asked.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
    expect((await ingest(app, 'https://ops.example')).headers['access-control-allow-origin']).toBe('https://ops.example');
    expect((await ingest(app, 'https://evil.example')).headers['access-control-allow-origin']).toBeUndefined();
    const metrics = await app.inject({ url: '/metrics', headers: { origin: 'https://ops.example' } });
    expect(metrics.headers['access-control-allow-origin']).toBe('https://ops.example');
  });
});

describe('load shedding (a saturated event loop starves the accepting of new connections)', () => {
  /** Keeps the event loop busy in 40 ms stretches (as thousands of busy connections would) until `done()`. */
  async function saturateUntil(done: () => Promise<boolean>): Promise<void> {
    for (let round = 0; round < 500; round++) {
      const until = performance.now() + 40;
      while (performance.now() < until) {
        // busy: the publisher's event loop is saturated
      }
      await new Promise((resolve) => setImmediate(resolve));
      if (round % 10 === 9 && (await done())) return;
    }
    throw new Error('the publisher never shed');
  }
  const fresh = (url: string, init: RequestInit = {}) => fetch(url, { ...init, keepalive: false, headers: { connection: 'close', ...init.headers } });

  it('does not shed its first requests for its own start-up: a loop held before listening is forgotten', async () => {
    // A start-up that holds the event loop in 40 ms stretches for 1.2 s before the publisher
    // listens (as a cluster worker's does): the shedder samples it, and with a 5 ms limit and a
    // minute's hold the first requests would be shed for a minute if that counted.
    const holdTheLoop = async () => {
      const end = performance.now() + 1_200;
      while (performance.now() < end) {
        const until = performance.now() + 40;
        while (performance.now() < until) {
          // start-up work
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    running = await startTestPublisher({ beforeListen: holdTheLoop, flags: ['--max-event-loop-turn-ms', '5', '--shed-hold-ms', '60000'] });
    const descriptor = await fresh(`${running.url}/streams/parking`);
    expect(descriptor.status).toBe(200);
    expect(await (await fetch(`${running.url}/metrics`)).text()).not.toMatch(/route="\(shed\)"/);
  });

  it('sheds new requests with a pre-built 503 + Retry-After, keeps /health and /metrics answering, and keeps established streams flowing', async () => {
    running = await startTestPublisher({ flags: ['--max-event-loop-turn-ms', '5', '--shed-hold-ms', '1500', '--pressure-retry-after-seconds', '7'] });
    await running.push();
    const established = await openSse(`${running.url}/streams/parking/events`);
    const latest = `${running.url}/streams/parking/latest`;
    await saturateUntil(async () => (await fresh(latest)).status === 503);

    const shed = await fresh(latest);
    expect(shed.status).toBe(503);
    expect(shed.headers.get('retry-after')).toBe('7');
    expect(await readProblem(shed)).toMatchObject({ status: 503, code: 'PUB_ERR_OVERLOADED' });
    for (const path of ['/health', '/metrics']) {
      const operator = await fresh(`${running.url}${path}`);
      expect(operator.status, path).toBe(200);
    }
    // A new EventSource would give up on a 503: it gets a 200 stream saying when to come back.
    const newcomer = await openSse(`${running.url}/streams/parking/events`);
    await newcomer.ended;
    expect(newcomer.response.statusCode).toBe(200);
    expect(newcomer.events.map((event) => event.event)).toEqual(['shed']);
    expect(newcomer.retries[0]).toBeGreaterThanOrEqual(2_000);
    // The established stream is not a request: it keeps flowing.
    await running.push();
    await established.waitForEvents(1);
    expect(elementIds(established.events)).toHaveLength(1);
    established.close();

    // Once the loop is idle again, shedding ends after shedHoldMs.
    for (let attempt = 0; attempt < 200; attempt++) {
      if ((await fresh(latest)).status === 200) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the publisher never recovered');
  });
});

describe('ingest bodies that attack the parser', () => {
  const TOKEN = 'hardening-token-0123456789abcdef';
  let ingest: TestPublisher;
  beforeAll(async () => {
    ingest = await startIngestPublisher(TOKEN);
  });
  afterAll(() => ingest.close());

  const post = (body: string | Buffer, contentType: string) =>
    fetch(`${ingest.url}/streams/sensors`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': contentType }, body });
  const latestSeq = () => ingest.publisher.hubs.get('sensors')!.log.latestSeq;

  /** `levels` JSON objects, one inside the other, each a node with one property: a valid JSON-LD document. */
  const nestedObjects = (levels: number) =>
    `${'{"https://example.org/p": '.repeat(levels - 1)}{"https://example.org/p": "deepest"${'}'.repeat(levels)}`;

  describe('stack exhaustion by deep JSON nesting', () => {
    it.each([
      ['10 000 nested arrays', `${'['.repeat(10_000)}${']'.repeat(10_000)}`],
      ['5 000 nested arrays (deep enough to overflow the JSON reviver)', `${'['.repeat(5_000)}${']'.repeat(5_000)}`],
      ['10 000 unclosed arrays (the error locator would recurse)', '['.repeat(10_000)],
      ['10 000 arrays behind a comment that hides them from a naive scan', `/* " */ ${'['.repeat(10_000)}${']'.repeat(10_000)}`],
      ['10 000 nested objects', `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`],
    ])('%s: 400 PUB_ERR_JSON_TOO_DEEP, not a 500 or a RangeError', async (_name, body) => {
      const before = latestSeq();
      const response = await post(body, 'application/ld+json');
      const problem = await readProblem(response);
      expect([response.status, problem.code]).toEqual([400, 'PUB_ERR_JSON_TOO_DEEP']);
      expect(JSON.stringify(problem)).not.toMatch(/RangeError|call stack|Maximum/);
      expect(latestSeq()).toBe(before);
    });

    it('a document at ingestMaxJsonDepth levels is accepted; one level more is refused with the limit and the line', async () => {
      const { ingestMaxJsonDepth } = ingest.config;
      expect(ingestMaxJsonDepth).toBe(64);
      expect((await post(nestedObjects(ingestMaxJsonDepth), 'application/ld+json')).status).toBe(201);
      const response = await post(`\n${nestedObjects(ingestMaxJsonDepth + 1)}`, 'application/ld+json');
      const problem = (await readProblem(response)) as Problem & { limitDepth?: number; line?: number };
      expect([response.status, problem.code, problem.limitDepth, problem.line]).toEqual([400, 'PUB_ERR_JSON_TOO_DEEP', 64, 2]);
    });
  });

  describe('IRIs that no format can write', () => {
    // Found by the HTTP fuzz: jsonld.js takes any string with a scheme for an absolute IRI, and
    // the N-Quads it writes then failed to parse (500). Turtle refuses the same IRIs (400).
    it.each([
      ['a subject', { '@id': 'http://x{y', 'https://example.org/p': 1 }],
      ['a property', { '@id': 'https://example.org/s', 'https://example.org/p|q': 1 }],
      ['an object', { '@id': 'https://example.org/s', 'https://example.org/p': { '@id': 'http://x"y>' } }],
      ['a datatype', { '@id': 'https://example.org/s', 'https://example.org/p': { '@value': 'v', '@type': 'http://x^y' } }],
      ['a context prefix', { '@context': { xsd: 'http:{//www.w3.org/2001/XMLSchema#' }, '@id': 'https://example.org/s', 'https://example.org/p': { '@value': 'v', '@type': 'xsd:date' } }],
    ])('in %s of a JSON-LD body: 400 PUB_ERR_RDF_SYNTAX, not a 500', async (_place, document) => {
      const before = latestSeq();
      const response = await post(JSON.stringify(document), 'application/ld+json');
      const problem = await readProblem(response);
      expect([response.status, problem.code]).toEqual([400, 'PUB_ERR_RDF_SYNTAX']);
      expect(problem.detail).toMatch(/IRI/);
      expect(latestSeq()).toBe(before);
    });

    it('the same IRI in Turtle is refused alike', async () => {
      const response = await post('<http://x{y> <https://example.org/p> 1 .', 'text/turtle');
      expect([response.status, (await readProblem(response)).code]).toEqual([400, 'PUB_ERR_RDF_SYNTAX']);
    });
  });

  describe('error bodies that leak internals', () => {
    // Found by fuzzing n3: it throws a TypeError of its own on this PREFIX (a relative IRI ':').
    it.each([
      ['text/turtle', 'PREFIX :<:>\n'],
      ['application/trig', '@prefix sosa: <~ttp://www.w3.org/ns/sosa/>x xsd: <http://www.w3.org/2001/XMLSchema#>.\n'],
    ])('%s that crashes the parser (%j): 400 without the JavaScript error', async (type, body) => {
      const response = await post(body, type);
      const problem = await readProblem(response);
      expect([response.status, problem.code]).toEqual([400, 'PUB_ERR_RDF_SYNTAX']);
      expect(problem.detail).not.toMatch(/Cannot read|undefined|TypeError/);
    });
  });

  describe('Content-Type smuggling', () => {
    // Found by the HTTP fuzz: content-type keeps the last of two equal parameter names.
    it.each([
      'text/turtle; charset=latin1; charset=utf-8',
      'text/turtle; charset=utf-8; CHARSET=utf-16',
      'application/ld+json; profile="a"; charset=utf-8; profile="b"',
    ])('%s: a repeated parameter cannot hide a refused one (415)', async (type) => {
      const before = latestSeq();
      const response = await post('<https://example.org/s> <https://example.org/p> "v" .', type);
      expect([response.status, (await readProblem(response)).code]).toEqual([415, 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE']);
      expect(latestSeq()).toBe(before);
    });
  });

  describe('lone surrogates: one element must mean the same in every format', () => {
    const s = 'https://example.org/s';
    // Each body holds its lone surrogate (an escape of half a UTF-16 pair) on line 2.
    const n3 = (object: string, graph = '') => `# a lone surrogate on the next line\n<${s}> <https://example.org/p> ${object}${graph} .\n`;
    const jsonLd = (member: string) => `{"@id": "${s}",\n ${member}}`;
    const bodies: Record<string, Record<string, string>> = {
      'text/turtle': { 'a literal': n3('"a\\uD800b"'), 'an IRI': n3('<https://example.org/\\uDC00>'), 'a language tag': n3('"a"@en-\\uD800'), 'a datatype IRI': n3('"a"^^<https://example.org/\\uD800>') },
      'application/trig': { 'a literal': n3('"a\\uD800b"'), 'an IRI': n3('<https://example.org/\\uDC00>'), 'a language tag': n3('"a"@en-\\uD800'), 'a datatype IRI': n3('"a"^^<https://example.org/\\U0000D800>') },
      'application/n-triples': { 'a literal': n3('"a\\uD800b"'), 'an IRI': n3('<https://example.org/\\uDC00>'), 'a language tag': n3('"a"@en-\\uD800'), 'a datatype IRI': n3('"a"^^<https://example.org/\\uD800>') },
      'application/n-quads': { 'a literal': n3('"a\\uD800b"', ' <https://example.org/g>'), 'an IRI': n3('<https://example.org/x>', ' <https://example.org/\\uDC00>'), 'a language tag': n3('"a"@en-\\uD800'), 'a datatype IRI': n3('"a"^^<https://example.org/\\uD800>') },
      'application/ld+json': {
        'a literal': jsonLd('"https://example.org/p": "a\\ud800b"'),
        'an IRI': jsonLd('"https://example.org/p": {"@id": "https://example.org/\\udc00"}'),
        'a language tag': jsonLd('"https://example.org/p": {"@value": "a", "@language": "en-\\ud800"}'),
        'a datatype IRI': jsonLd('"https://example.org/p": {"@value": "a", "@type": "https://example.org/\\ud800"}'),
        'a property IRI': jsonLd('"https://example.org/p\\udbff": "a"'),
        'a high surrogate before a pair': jsonLd('"https://example.org/p": "\\ud800\\ud800\\udc00"'),
      },
    };
    const cases = Object.entries(bodies).flatMap(([type, byPlace]) => Object.entries(byPlace).map(([place, body]) => [type, place, body] as const));

    it.each(cases)('%s, in %s: 400 PUB_ERR_RDF_SYNTAX on line 2, nothing stored', async (type, _place, body) => {
      const before = latestSeq();
      const response = await post(body, type);
      const problem = (await readProblem(response)) as Problem & { line?: number };
      expect([response.status, problem.code, problem.line]).toEqual([400, 'PUB_ERR_RDF_SYNTAX', 2]);
      expect(latestSeq()).toBe(before);
    });

    it('the UTF-8 bytes of a surrogate (CESU-8) are refused in every format, with the line', async () => {
      for (const type of Object.keys(bodies)) {
        const body = Buffer.concat([Buffer.from(`<${s}>\n<https://example.org/p> "a`), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('" .\n')]);
        const response = await post(body, type);
        const problem = (await readProblem(response)) as Problem & { line?: number };
        expect([response.status, problem.code, problem.line]).toEqual([400, 'PUB_ERR_RDF_SYNTAX', 2]);
      }
    });

    it('an escaped surrogate pair in JSON-LD is the character it encodes, served alike in every format', async () => {
      const response = await post(jsonLd('"https://example.org/p": "a\\ud83d\\ude00b"'), 'application/ld+json');
      expect(response.status).toBe(201);
      for (const format of formatNames) {
        const latest = await fetch(`${ingest.url}/streams/sensors/latest?format=${format}`);
        const quads = await parseRdf(format, await latest.text());
        expect(quads.find((quad) => quad.predicate.value === 'https://example.org/p')?.object.value, format).toBe('a\u{1F600}b');
      }
    });
  });
});

describe('echoes of client input in error bodies', () => {
  /** An error body echoes at most MAX_ECHOED_CHARS of any client string (of x's), marked as cut when it echoes. */
  async function expectBoundedEcho(response: Response, status: number, code: string, { echoes = true } = {}) {
    const text = await response.clone().text();
    const problem = await readProblem(response);
    expect([response.status, problem.code]).toEqual([status, code]);
    expect(text.length).toBeLessThan(1_500);
    expect(text).not.toContain('x'.repeat(MAX_ECHOED_CHARS + 1));
    if (echoes) expect(text).toContain(`${'x'.repeat(MAX_ECHOED_CHARS / 2)}${TRUNCATION_MARK}`);
    return problem;
  }

  it('a 15 KB URL refused by the router comes back bounded, in detail and instance', async () => {
    running = await startTestPublisher();
    const problem = await expectBoundedEcho(await fetch(`${running.url}/${'x'.repeat(15_000)}`), 404, 'PUB_ERR_ROUTE_NOT_FOUND');
    expect(problem.instance).toBe(`/${'x'.repeat(MAX_ECHOED_CHARS - 1)}${TRUNCATION_MARK}`);
    expect(problem.detail).toContain(TRUNCATION_MARK);
  });

  it('a 15 KB path below /ontologies/ comes back bounded in the list of documents', async () => {
    running = await startTestPublisher();
    const problem = await expectBoundedEcho(await fetch(`${running.url}/ontologies/${'x'.repeat(15_000)}`), 404, 'PUB_ERR_ROUTE_NOT_FOUND');
    expect(problem.detail).toContain('/ontologies/vocab');
  });

  it('a 15 KB path parameter that the router quotes is echoed bounded', async () => {
    running = await startTestPublisher();
    await expectBoundedEcho(await fetch(`${running.url}/streams/${'x'.repeat(15_000)}/latest`), 400, 'PUB_ERR_BAD_REQUEST');
  });

  it('a 15 KB Content-Type that Fastify refuses is not echoed', async () => {
    running = await startTestPublisher();
    const response = await fetch(`${running.url}/notifications/eventsource`, {
      method: 'POST',
      headers: { 'content-type': `application/${'x'.repeat(15_000)}` },
      body: '{}',
    });
    await expectBoundedEcho(response, 415, 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE', { echoes: false });
  });

  it('a 15 KB Last-Event-ID is not echoed', async () => {
    running = await startTestPublisher();
    const response = await fetch(`${running.url}/streams/parking/events`, { headers: { 'last-event-id': 'x'.repeat(15_000) } });
    await expectBoundedEcho(response, 400, 'PUB_ERR_INVALID_EVENT_ID', { echoes: false });
  });

  describe('ingest', () => {
    const TOKEN = 'echo-token-0123456789abcdef0123';
    let ingest: TestPublisher;
    beforeAll(async () => {
      ingest = await startIngestPublisher(TOKEN);
    });
    afterAll(() => ingest.close());
    const post = (body: string, headers: Record<string, string>) =>
      fetch(`${ingest.url}/streams/sensors`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/turtle', ...headers }, body });

    it.each([
      ['a malformed Content-Type', { 'content-type': `text/turtle; ${'x'.repeat(15_000)}` }],
      ['an unknown media type', { 'content-type': `text/${'x'.repeat(15_000)}` }],
      ['an unknown Content-Type parameter', { 'content-type': `text/turtle; a=${'x'.repeat(15_000)}` }],
      ['an unknown Content-Encoding', { 'content-encoding': 'x'.repeat(15_000) }],
    ])('%s of 15 KB is echoed bounded', async (_name, headers) => {
      await expectBoundedEcho(await post('<a> <b> <c> .', headers), 415, 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE');
    });

    it('a 60 KB token that the RDF parser quotes is echoed bounded', async () => {
      await expectBoundedEcho(await post(`<a> <b> ${'x'.repeat(60_000)} .`, {}), 400, 'PUB_ERR_RDF_SYNTAX');
    });
  });
});
