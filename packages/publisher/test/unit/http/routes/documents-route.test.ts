/**
 * The documents route through `app.inject()` (no socket): the stream descriptor's links and the
 * elements of the history, read from the log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../src/config/load-config.js';
import { createPublisher, type Publisher } from '../../../../src/publisher.js';
import { ManualSource } from '../../../../src/source/manual-source.js';
import { sampleObservations } from '../../../support/publisher-fixture.js';
import { parseRdf } from '../../../support/rdf.js';

let publisher: Publisher;
const config = loadConfig({ argv: ['--log-level', 'silent', '--log', 'memory', '--max-event-loop-turn-ms', '0', '--page-elements', '2', '--retained-elements', '2'], env: {} });
const stream = `${config.baseUrl}/streams/${config.streamId}`;

beforeAll(async () => {
  publisher = await createPublisher(config, { source: new ManualSource(5_000), processMetrics: false });
  await publisher.start();
  const hub = publisher.hubs.get(config.streamId)!;
  // Retention keeps whole pages: with 2 elements a page and 2 retained, 1 and 2 are removed.
  for (let value = 1; value <= 5; value++) await hub.publish(sampleObservations(stream, [value]), new Date(Date.UTC(2026, 10, 22, 16, 0, value)));
  await hub.log.applyRetention();
  expect(hub.log.oldestSeq).toBe(3);
});
afterAll(() => publisher.shutdown());

const epoch = () => publisher.hubs.get(config.streamId)!.log.epoch;

describe('GET /streams/{id}', () => {
  it('links every interface of the stream, the context and the notification services', async () => {
    const response = await publisher.app.inject({ url: `/streams/${config.streamId}`, headers: { accept: 'text/turtle' } });
    expect(response.statusCode).toBe(200);
    const link = String(response.headers.link);
    expect(link).toContain(`<${stream}/latest>; rel="latest-version"`);
    expect(link).toContain(`<${stream}/events>; rel="alternate"; type="text/event-stream"`);
    expect(link).toContain(`<${stream.replace(/^http/, 'ws')}/ws>; rel="alternate"`);
    expect(link).toContain(`<${stream}/history>; rel="https://w3id.org/tree#view"`);
    expect(link).toContain('rel="http://www.w3.org/ns/solid/terms#storageDescription"');
  });
});

describe('GET /streams/{id}/elements/{elementId}', () => {
  it('serves a retained element, immutable, in the negotiated format', async () => {
    const url = `/streams/${config.streamId}/elements/${epoch()}-4`;
    const response = await publisher.app.inject({ url, headers: { accept: 'application/n-quads' } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/n-quads/);
    expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(response.headers['last-modified']).toBe(new Date(Date.UTC(2026, 10, 22, 16, 0, 4)).toUTCString());
    const quads = await parseRdf('nquads', response.body);
    expect(quads.some((q) => q.graph.value === `${stream}/elements/${epoch()}-4`)).toBe(true);
    const again = await publisher.app.inject({ url, headers: { accept: 'application/n-quads', 'if-none-match': String(response.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('answers 410 for an element retention removed or of another epoch, 404 for one not yet published or malformed', async () => {
    const status = async (elementId: string) => {
      const response = await publisher.app.inject({ url: `/streams/${config.streamId}/elements/${elementId}` });
      return [response.statusCode, response.json().code];
    };
    expect(await status(`${epoch()}-1`)).toEqual([410, 'PUB_ERR_ELEMENT_GONE']);
    expect(await status('otherepoch-4')).toEqual([410, 'PUB_ERR_ELEMENT_GONE']);
    expect(await status(`${epoch()}-6`)).toEqual([404, 'PUB_ERR_ELEMENT_NOT_FOUND']);
    expect(await status('not-an-id')).toEqual([404, 'PUB_ERR_ELEMENT_NOT_FOUND']);
    const gone = await publisher.app.inject({ url: `/streams/${config.streamId}/elements/${epoch()}-1` });
    expect(gone.json()).toMatchObject({ epoch: epoch(), oldestSeq: 3, latestSeq: 5 });
  });
});
