/**
 * `GET /streams/{id}/latest` through Fastify (`app.inject()`, no socket): what the fast path
 * leaves to it — no element yet, long-polls and their limit.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../src/config/load-config.js';
import { createPublisher, type Publisher } from '../../../../src/publisher.js';
import { ManualSource } from '../../../../src/source/manual-source.js';
import { sampleObservations } from '../../../../src/testing/sample-observations.js';

let publisher: Publisher;
const config = loadConfig({ argv: ['--log-level', 'silent', '--log', 'memory', '--max-event-loop-turn-ms', '0', '--max-long-poll-waiters', '1'], env: {} });
const url = `/streams/${config.streamId}/latest`;
const hub = () => publisher.hubs.get(config.streamId)!;
const publish = (value: number) => hub().publish(sampleObservations(hub().definition.iri, [value]), new Date());

// A publisher of its own for each test, which starts with no element.
beforeEach(async () => {
  publisher = await createPublisher(config, { source: new ManualSource(5_000), processMetrics: false });
  await publisher.start();
});
afterEach(() => publisher.shutdown());

describe('GET /streams/{id}/latest (Fastify)', () => {
  it('answers 503 with Retry-After before the first element', async () => {
    const response = await publisher.app.inject({ url });
    expect([response.statusCode, response.json().code]).toEqual([503, 'PUB_ERR_NO_ELEMENT_YET']);
    expect(response.headers['retry-after']).toBe('1');
  });

  it('holds a long-poll until the next element, and refuses one past maxLongPollWaiters', async () => {
    await publish(1);
    const etag = String((await publisher.app.inject({ url, headers: { 'accept-encoding': 'identity' } })).headers.etag);
    const waiting = { 'accept-encoding': 'identity', 'if-none-match': etag, prefer: 'wait=20' };
    const held = publisher.app.inject({ url, headers: waiting });
    await expect.poll(() => hub().waiters.size).toBe(1);
    const refused = await publisher.app.inject({ url, headers: waiting });
    expect([refused.statusCode, refused.json().code]).toEqual([503, 'PUB_ERR_LONG_POLL_LIMIT']);
    await publish(2);
    const answered = await held;
    expect(answered.statusCode).toBe(200);
    expect(answered.headers.etag).not.toBe(etag);
    expect(answered.headers.etag).toBe(hub().latest!.etags.turtle.identity);
  });

  it('answers 304 at once to a matching If-None-Match without Prefer: wait', async () => {
    await publish(1);
    const etag = hub().latest!.etags.turtle.identity;
    const response = await publisher.app.inject({ url, headers: { 'accept-encoding': 'identity', 'if-none-match': etag } });
    expect(response.statusCode).toBe(304);
    expect(hub().waiters.size).toBe(0);
  });
});
