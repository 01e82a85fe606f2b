import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { createPublisher } from '../../src/publisher.js';
import { ManualSource } from '../../src/source/manual-source.js';
import { readProblem } from '../support/problem.js';
import { freePort, openSse, startTestPublisher, type TestPublisher } from '../../src/testing.js';

let running: TestPublisher | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('GET /health', () => {
  it('reports each stream', async () => {
    running = await startTestPublisher();
    await running.push();
    const response = await fetch(`${running.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      status: 'ok',
      streams: { parking: { latestSeq: 1, subscribers: 0, longPollWaiting: 0 } },
    });
  });
});

describe('GET /health while the sources start', () => {
  it('says starting (200), each source starting, never stopped, between listening and the start of the sources; then ok', async () => {
    // As server.ts orders it: listen first, then start the sources.
    const dir = mkdtempSync(join(tmpdir(), 'health-starting-'));
    const file = join(dir, 'publisher.yaml');
    writeFileSync(file, 'streams:\n  - id: parking\n    title: Parking\n    intervalSeconds: 60\n    source: { kind: simulator, facilities: 2 }\n  - id: sensors\n    title: Sensors\n    shape: none\n    source: { kind: ingest, tokenEnv: INGEST_TOKEN }\n');
    const config = loadConfig({
      argv: ['--config', file, '--port', String(await freePort()), '--log-level', 'silent', '--log', 'memory', '--max-event-loop-turn-ms', '0'],
      env: { INGEST_TOKEN: 'sensors-token-0123456789abcdef' },
    });
    const publisher = await createPublisher(config, { processMetrics: false });
    try {
      await publisher.listen();
      const before = await fetch(`${config.baseUrl}/health`);
      expect(before.status).toBe(200);
      const starting = (await before.json()) as { status: string; streams: Record<string, { source: { state: string } }> };
      expect(starting.status).toBe('starting');
      expect(Object.values(starting.streams).map((stream) => stream.source.state)).toEqual(['starting', 'starting']);
      expect(await (await fetch(`${config.baseUrl}/metrics`)).text()).toMatch(/^rdf_stream_source_up\{stream="parking",kind="simulator"\} 0$/m);

      await publisher.start();
      const after = (await (await fetch(`${config.baseUrl}/health`)).json()) as typeof starting;
      expect(after.status).toBe('ok');
      expect(Object.values(after.streams).map((stream) => stream.source.state)).toEqual(['ok', 'ok']);
    } finally {
      await publisher.shutdown();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a source says stopped only once it was started and stopped', async () => {
    const source = new ManualSource();
    expect(source.health().state).toBe('starting');
    source.start(() => undefined);
    expect(source.health().state).toBe('ok');
    source.stop();
    expect(source.health().state).toBe('stopped');
  });
});

describe('GET /time', () => {
  it('gives the server clock in milliseconds, never cached', async () => {
    running = await startTestPublisher();
    const before = Date.now();
    const response = await fetch(`${running.url}/time`);
    const { epochMs } = (await response.json()) as { epochMs: number };
    expect(epochMs).toBeGreaterThanOrEqual(before);
    expect(epochMs).toBeLessThanOrEqual(Date.now());
    expect(response.headers.get('cache-control')).toBe('no-store');
  });
});

describe('GET /metrics', () => {
  it('exposes subscribers, elements published, broadcast duration and request counts, without per-client labels', async () => {
    running = await startTestPublisher();
    const connection = await openSse(`${running.url}/streams/parking/events`);
    await running!.untilSubscribers(1);
    await running.push();
    await connection.waitForEvents(1);
    await fetch(`${running.url}/streams/parking/latest`);
    const text = await (await fetch(`${running.url}/metrics`)).text();
    expect(text).toMatch(/^rdf_stream_subscribers\{stream="parking"\} 1$/m);
    expect(text).toMatch(/^rdf_stream_transport_subscribers\{stream="parking",transport="sse"\} 1$/m);
    expect(text).toMatch(/^rdf_stream_elements_published_total\{stream="parking"\} 1$/m);
    expect(text).toMatch(/^rdf_stream_broadcast_duration_seconds_count\{stream="parking"\} 1$/m);
    expect(text).toMatch(/^rdf_stream_broadcast_subscribers\{stream="parking"\} 1$/m);
    expect(text).toMatch(/^rdf_stream_element_served_delay_seconds_count\{stream="parking"\} 1$/m);
    expect(text).toMatch(/^rdf_stream_http_requests_total\{route="\/streams\/:id\/latest",method="GET",status="2xx"\} 1$/m);
    // Without a shared log no instance holds a lease: the gauge has no series.
    expect(text).toMatch(/^# TYPE rdf_stream_source_lease_holder gauge$/m);
    expect(text).not.toMatch(/^rdf_stream_source_lease_holder\{/m);
    // kind: the source kind of a stream (simulator, replay, web-api, mqtt, ingest, …); transport:
    // sse or websocket: bounded too.
    const labelNames = new Set([...text.matchAll(/[{,](\w+)="/g)].map((match) => match[1]));
    expect([...labelNames].sort()).toEqual(['kind', 'le', 'method', 'route', 'status', 'stream', 'transport']);
    connection.close();
  });

  it('counts unmatched URLs under one label value', async () => {
    running = await startTestPublisher();
    for (const path of ['/a', '/b', '/c/d']) await fetch(`${running.url}${path}`);
    const text = await (await fetch(`${running.url}/metrics`)).text();
    expect(text).toMatch(/route="unmatched",method="GET",status="4xx"\} 3$/m);
  });
});

describe('load shedding (@fastify/under-pressure)', () => {
  const unhealthy = { healthCheck: async () => false };

  it('sheds new requests with 503 problem+json and Retry-After', async () => {
    running = await startTestPublisher({ flags: ['--pressure-retry-after-seconds', '7'], ...unhealthy });
    await running.push();
    const response = await fetch(`${running.url}/streams/parking/latest`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('7');
    expect((await readProblem(response)).code).toBe('PUB_ERR_OVERLOADED');
  });

  it('keeps /health and /metrics answering; /health says degraded', async () => {
    running = await startTestPublisher({ ...unhealthy });
    const health = await fetch(`${running.url}/health`);
    expect(health.status).toBe(503);
    expect(((await health.json()) as { status: string }).status).toBe('degraded');
    expect((await fetch(`${running.url}/metrics`)).status).toBe(200);
  });

  it('answers SSE with 200, a jittered retry: and a shed event, then ends: an EventSource comes back later', async () => {
    running = await startTestPublisher({ flags: ['--pressure-retry-after-seconds', '5', '--sse-retry-ms', '1000'], ...unhealthy });
    const connection = await openSse(`${running.url}/streams/parking/events`);
    expect(connection.response.statusCode).toBe(200);
    await connection.ended;
    expect(connection.events).toHaveLength(1);
    expect(connection.events[0]?.event).toBe('shed');
    const shed = JSON.parse(connection.events[0]!.data);
    expect(shed.code).toBe('PUB_ERR_OVERLOADED');
    expect(connection.retries).toEqual([shed.retryMs]);
    expect(shed.retryMs).toBeGreaterThanOrEqual(1000);
    expect(shed.retryMs).toBeLessThanOrEqual(5000);
    expect(running.subscribers()).toBe(0);
  });

  it('sheds SSE the same way beyond maxSubscribers (a limit, tested at the limit)', async () => {
    running = await startTestPublisher({ flags: ['--max-subscribers', '2'] });
    const kept = [await openSse(`${running.url}/streams/parking/events`), await openSse(`${running.url}/streams/parking/events`)];
    await running!.untilSubscribers(2);
    const third = await openSse(`${running.url}/streams/parking/events`);
    await third.ended;
    expect(third.events[0]?.event).toBe('shed');
    expect(running.subscribers()).toBe(2);
    await running.push();
    for (const connection of kept) {
      await connection.waitForEvents(1);
      connection.close();
    }
  });

  it('counts the subscribers of every stream against the one maxSubscribers', async () => {
    const streams = `streams:
  - { id: one, title: One, intervalSeconds: 60, source: { kind: simulator } }
  - { id: two, title: Two, intervalSeconds: 60, source: { kind: simulator } }
`;
    const configured = await startTestPublisher({ config: streams, flags: ['--max-subscribers', '1'] });
    try {
      const kept = await openSse(`${configured.url}/streams/one/events`);
      await configured.untilSubscribers(1);
      const other = await openSse(`${configured.url}/streams/two/events`);
      await other.ended;
      expect(other.events[0]?.event).toBe('shed');
      expect(configured.subscribers({ stream: 'two' })).toBe(0);
      kept.close();
    } finally {
      await configured.close();
    }
  });
});
