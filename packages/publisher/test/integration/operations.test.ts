import { afterEach, describe, expect, it } from 'vitest';
import { type RunningPublisher, startConfiguredPublisher, startPublisher } from '../support/publisher-fixture.js';
import { readProblem } from '../support/problem.js';
import { openSse } from '../support/sse-client.js';
import { waitUntil } from '../support/wait-until.js';

let running: RunningPublisher | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('GET /health', () => {
  it('reports each stream', async () => {
    running = await startPublisher();
    await running.push();
    const response = await fetch(`${running.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      status: 'ok',
      streams: { parking: { latestSeq: 1, subscribers: 0, longPollWaiting: 0 } },
    });
  });
});

describe('GET /time', () => {
  it('gives the server clock in milliseconds, never cached', async () => {
    running = await startPublisher();
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
    running = await startPublisher();
    const connection = await openSse(`${running.url}/streams/parking/events`);
    await waitUntil(() => running!.hub.broadcaster.size === 1);
    await running.push();
    await connection.waitForEvents(1);
    await fetch(`${running.url}/streams/parking/latest`);
    const text = await (await fetch(`${running.url}/metrics`)).text();
    expect(text).toMatch(/^rdf_stream_subscribers\{stream="parking"\} 1$/m);
    expect(text).toMatch(/^rdf_stream_transport_subscribers\{stream="parking",transport="sse"\} 1$/m);
    expect(text).toMatch(/^rdf_stream_elements_published_total\{stream="parking"\} 1$/m);
    expect(text).toMatch(/^rdf_stream_broadcast_duration_seconds_count\{stream="parking"\} 1$/m);
    expect(text).toMatch(/^rdf_stream_broadcast_subscribers\{stream="parking"\} 1$/m);
    expect(text).toMatch(/^rdf_stream_http_requests_total\{route="\/streams\/:id\/latest",method="GET",status="2xx"\} 1$/m);
    // kind: the source kind of a stream (simulator, replay, web-api, mqtt, ingest, …); transport:
    // sse or websocket: bounded too.
    const labelNames = new Set([...text.matchAll(/[{,](\w+)="/g)].map((match) => match[1]));
    expect([...labelNames].sort()).toEqual(['kind', 'le', 'method', 'route', 'status', 'stream', 'transport']);
    connection.close();
  });

  it('counts unmatched URLs under one label value', async () => {
    running = await startPublisher();
    for (const path of ['/a', '/b', '/c/d']) await fetch(`${running.url}${path}`);
    const text = await (await fetch(`${running.url}/metrics`)).text();
    expect(text).toMatch(/route="unmatched",method="GET",status="4xx"\} 3$/m);
  });
});

describe('load shedding (@fastify/under-pressure)', () => {
  const unhealthy = { healthCheck: async () => false };

  it('sheds new requests with 503 problem+json and Retry-After', async () => {
    running = await startPublisher(['--pressure-retry-after-seconds', '7'], unhealthy);
    await running.push();
    const response = await fetch(`${running.url}/streams/parking/latest`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('7');
    expect((await readProblem(response)).code).toBe('PUB_ERR_OVERLOADED');
  });

  it('keeps /health and /metrics answering; /health says degraded', async () => {
    running = await startPublisher([], unhealthy);
    const health = await fetch(`${running.url}/health`);
    expect(health.status).toBe(503);
    expect(((await health.json()) as { status: string }).status).toBe('degraded');
    expect((await fetch(`${running.url}/metrics`)).status).toBe(200);
  });

  it('answers SSE with 200, a jittered retry: and a shed event, then ends: an EventSource comes back later', async () => {
    running = await startPublisher(['--pressure-retry-after-seconds', '5', '--sse-retry-ms', '1000'], unhealthy);
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
    expect(running.hub.broadcaster.size).toBe(0);
  });

  it('sheds SSE the same way beyond maxSubscribers (a limit, tested at the limit)', async () => {
    running = await startPublisher(['--max-subscribers', '2']);
    const kept = [await openSse(`${running.url}/streams/parking/events`), await openSse(`${running.url}/streams/parking/events`)];
    await waitUntil(() => running!.hub.broadcaster.size === 2);
    const third = await openSse(`${running.url}/streams/parking/events`);
    await third.ended;
    expect(third.events[0]?.event).toBe('shed');
    expect(running.hub.broadcaster.size).toBe(2);
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
    const configured = await startConfiguredPublisher(streams, { flags: ['--max-subscribers', '1'] });
    try {
      const kept = await openSse(`${configured.url}/streams/one/events`);
      await waitUntil(() => configured.publisher.hubs.get('one')!.broadcaster.size === 1);
      const other = await openSse(`${configured.url}/streams/two/events`);
      await other.ended;
      expect(other.events[0]?.event).toBe('shed');
      expect(configured.publisher.hubs.get('two')!.broadcaster.size).toBe(0);
      kept.close();
    } finally {
      await configured.close();
    }
  });
});
