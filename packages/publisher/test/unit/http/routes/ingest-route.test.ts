/**
 * `POST /streams/{id}` through `app.inject()` (no socket): the checks before the body, the
 * element it appends, and what an `Idempotency-Key` replays.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../src/config/load-config.js';
import { createPublisher, type Publisher } from '../../../../src/publisher.js';

const TOKEN = 'sensors-token-0123456789abcdef';
const OTHER_TOKEN = 'other-token-0123456789abcdefgh';
const MAX_BODY_BYTES = 4_096;

let publisher: Publisher;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ingest-route-'));
  const file = join(dir, 'publisher.yaml');
  writeFileSync(
    file,
    ['streams:', '  - id: sensors', '    title: Sensors', '    source: { kind: ingest, tokenEnv: SENSORS_TOKEN }', '  - id: other', '    title: Other', '    source: { kind: ingest, tokenEnv: OTHER_TOKEN }', ''].join('\n'),
  );
  const config = loadConfig({
    argv: ['--config', file, '--log-level', 'silent', '--log', 'memory', '--max-event-loop-turn-ms', '0', '--ingest-max-body-bytes', String(MAX_BODY_BYTES)],
    env: { SENSORS_TOKEN: TOKEN, OTHER_TOKEN },
  });
  publisher = await createPublisher(config, { processMetrics: false });
  await publisher.start();
});
afterAll(() => publisher.shutdown());

/** One SOSA observation in Turtle, as the default shapes want it (its IRI resolves against the stream). */
const observation = (value: number) =>
  [
    '@prefix sosa: <http://www.w3.org/ns/sosa/>.',
    '@prefix xsd: <http://www.w3.org/2001/XMLSchema#>.',
    '<obs/1> a sosa:Observation; sosa:madeBySensor <https://example.org/sensors/t1>;',
    '  sosa:observedProperty <https://example.org/properties/temperature>; sosa:hasFeatureOfInterest <https://example.org/rooms/r1>;',
    `  sosa:hasSimpleResult ${value}; sosa:resultTime "2026-11-22T10:00:00.000Z"^^xsd:dateTime.`,
    '',
  ].join('\n');

const post = (body: string, headers: Record<string, string> = {}, stream = 'sensors') =>
  publisher.app.inject({
    method: 'POST',
    url: `/streams/${stream}`,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/turtle', ...headers },
    payload: body,
  });

const log = (stream = 'sensors') => publisher.hubs.get(stream)!.log;

describe('POST /streams/{id}', () => {
  it('appends one element and answers 201 with its Location, where it can be read', async () => {
    const before = log().latestSeq;
    const response = await post(observation(21.5));
    expect(response.statusCode).toBe(201);
    expect(log().latestSeq).toBe(before + 1);
    const location = String(response.headers.location);
    expect(location).toMatch(new RegExp(`/streams/sensors/elements/${log().epoch}-${before + 1}$`));
    const element = await publisher.app.inject({ url: new URL(location).pathname, headers: { accept: 'application/n-triples' } });
    expect(element.statusCode).toBe(200);
    expect(element.body).toContain('"21.5"');
  });

  it('refuses, appending nothing, a missing or foreign token, an unsupported type or coding, and a body announced too large', async () => {
    const before = log().latestSeq;
    const refused = async (headers: Record<string, string>, body = observation(1)) => {
      const response = await post(body, headers);
      return [response.statusCode, response.json().code];
    };
    expect(await refused({ authorization: '' })).toEqual([401, 'PUB_ERR_UNAUTHORIZED']);
    expect(await refused({ authorization: `Bearer ${OTHER_TOKEN}` })).toEqual([403, 'PUB_ERR_FORBIDDEN']);
    expect(await refused({ 'content-type': 'text/plain' })).toEqual([415, 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE']);
    expect(await refused({ 'content-encoding': 'compress' })).toEqual([415, 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE']);
    expect(await refused({}, `${observation(1)}#${'x'.repeat(MAX_BODY_BYTES)}\n`)).toEqual([413, 'PUB_ERR_BODY_TOO_LARGE']);
    expect(log().latestSeq).toBe(before);
  });

  it('answers a retry with the same Idempotency-Key and body from the kept answer, without a second element', async () => {
    const first = await post(observation(7), { 'idempotency-key': 'reading-7' });
    expect(first.statusCode).toBe(201);
    const after = log().latestSeq;
    const retry = await post(observation(7), { 'idempotency-key': 'reading-7' });
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers.location).toBe(first.headers.location);
    expect(log().latestSeq).toBe(after);
  });

  it('refuses the same Idempotency-Key with another body (422), and lets a refused request be sent again under its key', async () => {
    await post(observation(8), { 'idempotency-key': 'reading-8' });
    const reused = await post(observation(9), { 'idempotency-key': 'reading-8' });
    expect([reused.statusCode, reused.json().code]).toEqual([422, 'PUB_ERR_IDEMPOTENCY_KEY_REUSED']);
    const broken = await post('<unterminated', { 'idempotency-key': 'reading-10' });
    expect(broken.statusCode).toBe(400);
    const corrected = await post(observation(10), { 'idempotency-key': 'reading-10' });
    expect(corrected.statusCode).toBe(201);
    expect(corrected.headers['idempotent-replayed']).toBeUndefined();
  });
});
