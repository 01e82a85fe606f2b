/**
 * The history route through `app.inject()` (no socket): which pages exist, which are immutable,
 * and the validators of the documents that change with the next element.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../src/config/load-config.js';
import { createPublisher, type Publisher } from '../../../../src/publisher.js';
import { ManualSource } from '../../../../src/source/manual-source.js';
import { sampleObservations } from '../../../../src/testing/sample-observations.js';

const config = loadConfig({ argv: ['--log-level', 'silent', '--log', 'memory', '--max-event-loop-turn-ms', '0', '--page-elements', '2', '--retained-elements', '2', '--history-grace-seconds', '0'], env: {} });
const stream = `${config.baseUrl}/streams/${config.streamId}`;
const history = `/streams/${config.streamId}/history`;

/**
 * A publisher of its own for each block, in the same state whatever ran before: pages of two,
 * page 1 (elements 1, 2) removed by retention, page 2 (3, 4) full, page 3 (5) open.
 */
function publisherWithPages() {
  const running = {
    publisher: undefined as unknown as Publisher,
    hub: () => running.publisher.hubs.get(config.streamId)!,
    publish: (value: number) => running.hub().publish(sampleObservations(stream, [value]), new Date(Date.UTC(2026, 10, 22, 16, 0, value))),
  };
  beforeAll(async () => {
    running.publisher = await createPublisher(config, { source: new ManualSource(5_000), processMetrics: false });
    await running.publisher.start();
    for (let value = 1; value <= 5; value++) await running.publish(value);
    await running.hub().log.applyRetention();
    expect(running.hub().log.oldestSeq).toBe(3);
  });
  afterAll(() => running.publisher.shutdown());
  return running;
}

describe('GET /streams/{id}/history/{page}', () => {
  // These only read: the pages stay as the publisher was given them.
  const running = publisherWithPages();
  const { hub } = running;
  const page = (n: number, headers: Record<string, string> = {}) => running.publisher.app.inject({ url: `${history}/${hub().log.epoch}-${n}`, headers: { accept: 'text/turtle', ...headers } });

  it('serves a full page as immutable, with its last modification', async () => {
    const response = await page(2);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/turtle/);
    expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(response.headers['last-modified']).toBe(new Date(Date.UTC(2026, 10, 22, 16, 0, 4)).toUTCString());
    expect(response.body).toContain(`${stream}/elements/${hub().log.epoch}-3`);
    expect(response.body).toContain(`${stream}/elements/${hub().log.epoch}-4`);
  });

  it('serves the open page as cacheable only until the next element', async () => {
    const response = await page(3);
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).not.toContain('immutable');
    expect(response.headers['cache-control']).toMatch(/max-age=\d+/);
  });

  it('answers 410 for a page retention removed or of another epoch, 404 for one not yet begun or malformed, with the pages there are', async () => {
    const gone = await page(1);
    expect([gone.statusCode, gone.json().code]).toEqual([410, 'PUB_ERR_PAGE_GONE']);
    expect(gone.json()).toMatchObject({ epoch: hub().log.epoch, oldestPage: 2, openPage: 3 });
    const otherEpoch = await running.publisher.app.inject({ url: `${history}/otherepoch-2` });
    expect([otherEpoch.statusCode, otherEpoch.json().code]).toEqual([410, 'PUB_ERR_PAGE_GONE']);
    const ahead = await page(4);
    expect([ahead.statusCode, ahead.json().code]).toEqual([404, 'PUB_ERR_PAGE_NOT_FOUND']);
    const malformed = await running.publisher.app.inject({ url: `${history}/latest` });
    expect([malformed.statusCode, malformed.json().code]).toEqual([404, 'PUB_ERR_PAGE_NOT_FOUND']);
  });
});

describe.each([
  ['GET /streams/{id}/history', history],
  ['GET /streams/{id}/history/index', `${history}/index`],
])('%s', (_name, url) => {
  // The first test publishes an element: a publisher of its own, not the one whose pages the tests above read.
  const running = publisherWithPages();
  const { hub, publish } = running;

  it('answers 304 to its entity tag until a page starts or is removed', async () => {
    const first = await running.publisher.app.inject({ url, headers: { accept: 'text/turtle' } });
    expect(first.statusCode).toBe(200);
    expect(first.headers.vary).toBe('Accept, Accept-Encoding');
    const etag = String(first.headers.etag);
    const unchanged = await running.publisher.app.inject({ url, headers: { accept: 'text/turtle', 'if-none-match': etag } });
    expect(unchanged.statusCode).toBe(304);
    // The next element fills the open page and makes retention (of 2 elements) remove the oldest page.
    await publish(hub().log.latestSeq + 1);
    const changed = await running.publisher.app.inject({ url, headers: { accept: 'text/turtle', 'if-none-match': etag } });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
  });

  it('answers 406 when no content coding is acceptable', async () => {
    const refused = await running.publisher.app.inject({ url, headers: { accept: 'text/turtle', 'accept-encoding': 'identity;q=0, *;q=0' } });
    expect(refused.statusCode).toBe(406);
  });
});
