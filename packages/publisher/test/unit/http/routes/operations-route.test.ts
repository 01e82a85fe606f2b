/** `/health` and `/time` through `app.inject()` (no socket): the states an operator reads. */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../src/config/load-config.js';
import { createPublisher, type Publisher } from '../../../../src/publisher.js';
import { ManualSource } from '../../../../src/source/manual-source.js';
import { sampleObservations } from '../../../support/publisher-fixture.js';

const config = loadConfig({ argv: ['--log-level', 'silent', '--log', 'memory', '--max-event-loop-turn-ms', '0'], env: {} });
const publishers: Publisher[] = [];
afterEach(async () => {
  await Promise.all(publishers.splice(0).map((publisher) => publisher.shutdown()));
});

async function publisherWith(options: { healthCheck?: () => Promise<boolean>; start?: boolean } = {}) {
  const publisher = await createPublisher(config, {
    source: new ManualSource(5_000),
    processMetrics: false,
    ...(options.healthCheck ? { healthCheck: options.healthCheck } : {}),
  });
  publishers.push(publisher);
  if (options.start !== false) await publisher.start();
  return publisher;
}

const health = async (publisher: Publisher) => {
  const response = await publisher.app.inject({ url: '/health' });
  return { status: response.statusCode, body: response.json(), cacheControl: response.headers['cache-control'] };
};

describe('GET /health', () => {
  it("reports each stream's log, latest element and source, uncached", async () => {
    const publisher = await publisherWith();
    const hub = publisher.hubs.get(config.streamId)!;
    const generatedAt = new Date(Date.UTC(2026, 10, 22, 16));
    await hub.publish(sampleObservations(hub.definition.iri, [1]), generatedAt);
    const { status, body, cacheControl } = await health(publisher);
    expect(status).toBe(200);
    expect(cacheControl).toBe('no-store');
    expect(body.status).toBe('ok');
    expect(body.streams[config.streamId]).toMatchObject({
      latestSeq: 1,
      lastElementAt: generatedAt.toISOString(),
      subscribers: 0,
      longPollWaiting: 0,
      source: { kind: 'manual', state: 'ok' },
      log: { epoch: hub.log.epoch, oldestSeq: 1, state: 'ok' },
    });
  });

  it('says `starting` (200) until every source has started', async () => {
    const publisher = await publisherWith({ start: false });
    const { status, body } = await health(publisher);
    expect([status, body.status]).toEqual([200, 'starting']);
    expect(body.streams[config.streamId].lastElementAt).toBeNull();
  });

  it('answers 503 `degraded` when the extra health check fails', async () => {
    let healthy = true;
    const publisher = await publisherWith({ healthCheck: async () => healthy });
    expect((await health(publisher)).body.status).toBe('ok');
    healthy = false;
    const { status, body } = await health(publisher);
    expect([status, body.status]).toEqual([503, 'degraded']);
  });
});

describe('GET /time', () => {
  it("answers the server's clock, uncached", async () => {
    const publisher = await publisherWith();
    const before = Date.now();
    const response = await publisher.app.inject({ url: '/time' });
    const { epochMs } = response.json() as { epochMs: number };
    expect(epochMs).toBeGreaterThanOrEqual(before);
    expect(epochMs).toBeLessThanOrEqual(Date.now());
    expect(response.headers['cache-control']).toBe('no-store');
  });
});
