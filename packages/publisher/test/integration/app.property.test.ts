/**
 * Fuzz over HTTP (`app.inject()`, no socket): whatever `Last-Event-ID`, `Accept`,
 * `Accept-Encoding`, `Content-Type` or ingest body a client sends — random, or a valid one
 * mutated — the publisher does not crash and answers no 5xx: a success, or a problem+json whose
 * code is in the catalogue, with that code's status, and whose echoes are bounded. Runs
 * HTTP_FUZZ_RUNS values per property (test/support/fuzz.ts).
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { elementId, formatNames, mediaTypes as rdfMediaTypes } from '@rdf-stream/protocol';
import { errorCatalogue, type ErrorCode, MAX_DETAIL_CHARS, MAX_ECHOED_CHARS, TRUNCATION_MARK } from '../../src/errors.js';
import { FUZZ_TIMEOUT_MS, HTTP_FUZZ_RUNS, headerValue, INTERNAL_ERROR_MESSAGE } from '../support/fuzz.js';
import { mutatedBody, observationNTriples, randomBody } from '../support/fuzz-bodies.js';
import { type ConfiguredPublisher, startConfiguredPublisher } from '../support/publisher-fixture.js';
import { waitUntil } from '../support/wait-until.js';

const TOKEN = 'fuzz-token-0123456789abcdef0123';
const PLAIN_TOKEN = 'fuzz-plain-token-0123456789abcdef';

let running: ConfiguredPublisher;
let app: FastifyInstance;
beforeAll(async () => {
  running = await startConfiguredPublisher(
    `streams:
  - id: sensors
    title: Sensors pushing their observations, checked against the bundled shapes
    source: { kind: ingest, tokenEnv: TOKEN }
  - id: plain
    title: Any RDF, no shapes
    shape: none
    source: { kind: ingest, tokenEnv: PLAIN_TOKEN }
  - id: parking
    title: Simulated parking
    intervalSeconds: 60
    source: { kind: simulator, facilities: 2 }
`,
    // No load shedding: a 503 for a busy machine would hide the 5xx this looks for.
    { env: { TOKEN, PLAIN_TOKEN }, flags: ['--log', 'memory', '--max-event-loop-delay-ms', '0'] },
  );
  app = running.publisher.app;
  await waitUntil(() => running.publisher.hubs.get('parking')!.log.latestSeq >= 1);
});
afterAll(() => running.close());

/** 5xx answers that are the publisher's documented state, not a failure: the live page is not built in tests. */
const expectedServerStates = new Set<ErrorCode>(['PUB_ERR_PAGE_NOT_BUILT']);

/** The property every answer must have: no 5xx; an error is a catalogued problem with bounded echoes. */
function expectSoundAnswer(response: LightMyRequestResponse, allowed: { readonly codes?: readonly ErrorCode[] } = {}): void {
  if (response.statusCode < 400) return;
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = response.json<{ code: ErrorCode; status: number; detail?: string; instance?: string }>();
  expect(Object.hasOwn(errorCatalogue, problem.code), problem.code).toBe(true);
  expect([response.statusCode, problem.status]).toEqual([errorCatalogue[problem.code].status, errorCatalogue[problem.code].status]);
  if (response.statusCode >= 500) expect(expectedServerStates.has(problem.code), `${problem.code}: ${problem.detail}`).toBe(true);
  if (allowed.codes !== undefined) expect(allowed.codes).toContain(problem.code);
  expect((problem.detail ?? '').length).toBeLessThanOrEqual(MAX_DETAIL_CHARS + TRUNCATION_MARK.length);
  expect(problem.detail ?? '').not.toMatch(INTERNAL_ERROR_MESSAGE);
  expect((problem.instance ?? '').length).toBeLessThanOrEqual(MAX_ECHOED_CHARS + TRUNCATION_MARK.length);
}

const fuzz = { numRuns: HTTP_FUZZ_RUNS };

describe('HTTP fuzz: request headers', () => {
  it('Last-Event-ID (header or ?lastEventId=): a stream, or 400 PUB_ERR_INVALID_EVENT_ID', async () => {
    const hub = running.publisher.hubs.get('parking')!;
    const ownId = fc.nat({ max: 5 }).map((seq) => elementId(hub.log.epoch, seq + 1));
    const value = fc.oneof(ownId, fc.stringMatching(/^[a-z0-9]{1,33}-[0-9]{1,17}$/), fc.bigInt({ min: 0n, max: 10n ** 18n }).map(String), headerValue(['-', '0', ' ']));
    await fc.assert(
      fc.asyncProperty(value, fc.boolean(), async (id, inQuery) => {
        const response = await app.inject({
          url: '/streams/parking/events',
          ...(inQuery ? { query: { lastEventId: id } } : { headers: { 'last-event-id': id } }),
          payloadAsStream: true,
        });
        if (response.statusCode === 200) {
          expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
          response.raw.res.destroy(); // the subscriber goes, as when a client disconnects
          return;
        }
        let body = '';
        for await (const chunk of response.stream()) body += String(chunk);
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect([response.statusCode, (JSON.parse(body) as { code: string }).code]).toEqual([400, 'PUB_ERR_INVALID_EVENT_ID']);
      }),
      fuzz,
    );
    await waitUntil(() => hub.broadcaster.size === 0);
  }, FUZZ_TIMEOUT_MS);

  it('Accept and Accept-Encoding on every document: an offered format and coding, or 406', async () => {
    const url = fc.constantFrom('/streams/parking/latest', '/streams/parking', '/streams', '/streams/parking/history', '/streams/parking/latest?format=trig', '/notifications');
    const accept = fc.oneof(
      fc.constantFrom(...Object.values(rdfMediaTypes), 'application/json', 'text/html', '*/*', 'text/html;q=0.9, */*;q=0.8'),
      headerValue(['text/turtle', 'text/html', 'q=0', ';', ',', '*/*', '"']),
    );
    const acceptEncoding = fc.oneof(fc.constantFrom('gzip', 'br', 'identity;q=0', '*;q=0', 'gzip;q=0, identity;q=0'), headerValue(['gzip', 'br', 'identity', 'q=0', ';', ',', '*']));
    await fc.assert(
      fc.asyncProperty(url, fc.option(accept), fc.option(acceptEncoding), async (path, acceptHeader, encodingHeader) => {
        const response = await app.inject({
          url: path,
          headers: { ...(acceptHeader === null ? {} : { accept: acceptHeader }), ...(encodingHeader === null ? {} : { 'accept-encoding': encodingHeader }) },
        });
        expectSoundAnswer(response, { codes: ['PUB_ERR_NOT_ACCEPTABLE', 'PUB_ERR_PAGE_NOT_BUILT'] });
        if (response.statusCode !== 200) return;
        expect([undefined, 'br', 'gzip']).toContain(response.headers['content-encoding']);
      }),
      fuzz,
    );
  }, FUZZ_TIMEOUT_MS);
});

/** POSTs to the stream with shapes, or (`plain`, faster: no SHACL thread) to the one without. */
const post = (type: string, body: string | Buffer, { headers = {}, plain = false }: { headers?: Record<string, string>; plain?: boolean } = {}) =>
  app.inject({
    method: 'POST',
    url: plain ? '/streams/plain' : '/streams/sensors',
    headers: { authorization: `Bearer ${plain ? PLAIN_TOKEN : TOKEN}`, 'content-type': type, ...headers },
    payload: body,
  });

describe('HTTP fuzz: ingest', () => {
  it('Content-Type: 201 for an accepted RDF type, else 415 (or 400 for N-Triples read as JSON-LD)', async () => {
    const type = fc.oneof(
      fc.tuple(fc.constantFrom(...Object.values(rdfMediaTypes), 'text/plain', 'application/json'), fc.array(fc.constantFrom('charset=utf-8', 'charset=latin1', 'profile="x"', 'q=1', 'charset="UTF-8"'), { maxLength: 3 }), fc.boolean())
        .map(([mediaType, parameters, upper]) => [upper ? mediaType.toUpperCase() : mediaType, ...parameters].join('; ')),
      headerValue(['text/turtle', ';', '=', '"', ',', 'charset=utf-8']),
    );
    let seq = 1_000;
    await fc.assert(
      fc.asyncProperty(type, async (contentType) => {
        const response = await post(contentType, observationNTriples(seq++), { plain: true });
        expectSoundAnswer(response, { codes: ['PUB_ERR_UNSUPPORTED_MEDIA_TYPE', 'PUB_ERR_RDF_SYNTAX'] });
        if (response.statusCode === 400) expect(contentType.toLowerCase()).toContain('application/ld+json');
      }),
      fuzz,
    );
  }, FUZZ_TIMEOUT_MS);

  it('random bodies, in every accepted type, plain or gzipped: no 5xx, a catalogued problem', async () => {
    await fc.assert(
      fc.asyncProperty(randomBody, fc.boolean(), async ([type, body], gzipped) => {
        expectSoundAnswer(await post(type, gzipped ? gzipSync(body) : body, { headers: gzipped ? { 'content-encoding': 'gzip' } : {}, plain: true }));
      }),
      fuzz,
    );
  }, FUZZ_TIMEOUT_MS);

  it('valid bodies with random edits: 201, or a catalogued problem — never a 5xx', async () => {
    const readAs = fc.oneof({ arbitrary: fc.constant('same' as const), weight: 4 }, { arbitrary: fc.constantFrom(...formatNames), weight: 1 });
    await fc.assert(
      fc.asyncProperty(mutatedBody, readAs, fc.boolean(), async ([type, body], format, plain) => {
        const response = await post(format === 'same' ? type : rdfMediaTypes[format], body, { plain });
        expectSoundAnswer(response);
        if (response.statusCode < 400) expect(response.statusCode).toBe(201);
      }),
      fuzz,
    );
  }, FUZZ_TIMEOUT_MS);
});
