import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openSse, type SseConnection, startTestPublisher, type TestPublisher } from '../../src/testing.js';

/** For state no event announces: checked every 10 ms, with a deadline for a broken server, not a measure of speed. */
const patience = { timeout: 30_000, interval: 10 };

/**
 * A web-API stream whose real upstream (a local HTTP server) fails, recovers and fails again:
 * the publisher reports the source in /health and keeps serving the last element meanwhile.
 */
let upstream: Server;
let answer: (response: ServerResponse) => void;
const apiKeys = new Set<string | undefined>();
let running: TestPublisher;
let sse: SseConnection;

const healthOf = async () => {
  const response = await fetch(`${running.url}/health`);
  const body = (await response.json()) as {
    status: string;
    streams: Record<string, { source: { kind: string; state: string; detail?: string; lastSuccessAt?: string | null } }>;
  };
  return { status: response.status, overall: body.status, source: body.streams.rooms?.source };
};

/** One sample of the publisher's /metrics. */
const metric = async (series: string) => {
  const text = await (await fetch(`${running.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

/** Resolves when the upstream has answered its next request (with the current `answer`). */
const nextUpstreamAnswer = () =>
  once(upstream, 'request').then(async (args) => {
    const response = (args as [IncomingMessage, ServerResponse])[1];
    if (!response.writableFinished) await once(response, 'finish');
  });

const failing = (response: ServerResponse) => response.writeHead(500).end('upstream broke');
const rooms = (value: number) => (response: ServerResponse) =>
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ room: 'r1', co2: value }]));

beforeAll(async () => {
  answer = failing;
  upstream = createServer((request, response) => {
    apiKeys.add(request.headers['x-api-key'] as string | undefined);
    answer(response);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const { port } = upstream.address() as { port: number };
  running = await startTestPublisher({
    config: `streams:
  - id: rooms
    title: Room CO2 from a building API
    source:
      kind: web-api
      url: http://127.0.0.1:${port}/rooms
      pollSeconds: 0.1
      timeoutMs: 1000
      headersFromEnv: { x-api-key: ROOMS_API_KEY }
      mapping:
        sensor: https://example.org/sensors/{room}
        observedProperty: https://example.org/properties/co2
        featureOfInterest: https://example.org/rooms/{room}
        result: "{co2}"
`,
    flags: ['--source-retry-initial-ms', '20', '--source-retry-max-ms', '50'],
    env: { ROOMS_API_KEY: 'rooms-api-key-1' },
  });
  sse = await openSse(`${running.url}/streams/rooms/events`);
});

afterAll(async () => {
  sse?.close();
  await running?.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

const sourceState = () => running.publisher.hubs.get('rooms')?.source.health().state;

describe('a web-API source whose upstream fails', () => {
  it('is degraded, with the reason, while the publisher stays healthy', async () => {
    await vi.waitUntil(() => sourceState() === 'degraded', patience);
    const { status, overall, source } = await healthOf();
    expect({ status, overall }).toEqual({ status: 200, overall: 'ok' });
    expect(source).toMatchObject({ kind: 'web-api', state: 'degraded', detail: 'upstream answered HTTP 500', lastSuccessAt: null });
    expect((await fetch(`${running.url}/streams/rooms/latest`)).status).toBe(503);
    expect(await metric('rdf_stream_source_up{stream="rooms",kind="web-api"}')).toBe(0);
  });

  it('publishes once the upstream recovers, and is ok again', async () => {
    answer = rooms(612);
    const [event] = await sse.waitForEvents(1);
    expect(event?.data).toContain('612');
    expect((await healthOf()).source).toMatchObject({ state: 'ok', lastSuccessAt: expect.any(String) });
    expect(await metric('rdf_stream_source_up{stream="rooms",kind="web-api"}')).toBe(1);
  });

  it('keeps serving the last element when the upstream fails again', async () => {
    // /latest follows the SSE broadcast once its bodies are compressed.
    await vi.waitUntil(() => running.publisher.hubs.get('rooms')?.latest !== undefined, patience);
    const before = await fetch(`${running.url}/streams/rooms/latest`);
    expect(before.status).toBe(200);
    answer = failing;
    await nextUpstreamAnswer();
    await vi.waitUntil(() => sourceState() === 'degraded', patience);
    expect((await healthOf()).source).toMatchObject({ state: 'degraded', detail: 'upstream answered HTTP 500' });
    const after = await fetch(`${running.url}/streams/rooms/latest`);
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'));
    expect(sse.events).toHaveLength(1);
  });

  it('sent the API key named by headersFromEnv with every request', () => {
    expect([...apiKeys]).toEqual(['rooms-api-key-1']);
  });
});
