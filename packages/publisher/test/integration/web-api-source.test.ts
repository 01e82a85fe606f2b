import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RecordMapping } from '../../src/source/record-mapping.js';
import { WebApiSource, type WebApiSourceOptions } from '../../src/source/web-api-source.js';
import { Elements, RecordingLogger } from '../support/source-recorder.js';

/** For state no event announces: checked every 10 ms, with a deadline for a broken server, not a measure of speed. */
const patience = { timeout: 30_000, interval: 10 };


type Reply = (request: IncomingMessage, response: ServerResponse) => void;

/** A real HTTP upstream whose answer the test changes between polls, and which reports every request. */
class Upstream {
  readonly server: Server;
  reply: Reply = (_request, response) => response.end('[]');
  #waiting: Array<(headers: IncomingHttpHeaders) => void> = [];

  constructor() {
    this.server = createServer((request, response) => {
      this.reply(request, response);
      for (const resolve of this.#waiting.splice(0)) resolve(request.headers);
    });
  }

  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/data`;
  }

  /**
   * The headers of the next request, once it has been answered. Polls are sequential, so when
   * request n + 1 arrives the source has finished processing the answer to request n.
   */
  nextRequest(): Promise<IncomingHttpHeaders> {
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
}

const json =
  (body: unknown, headers: Record<string, string> = {}): Reply =>
  (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };

const status =
  (code: number, headers: Record<string, string> = {}): Reply =>
  (_request, response) => {
    response.writeHead(code, headers);
    response.end();
  };

/** Never answers: the request hangs until the client gives up. */
const hang: Reply = () => {};

const mapping: RecordMapping = {
  records: 'data.stations',
  sensor: 'https://data.example.org/sensors/{id}',
  observedProperty: 'http://example.org/airTemperature',
  featureOfInterest: 'https://data.example.org/stations/{id}',
  result: '{temperature}',
  unit: 'http://qudt.org/vocab/unit/DEG_C',
  id: '{id}',
};

const stations = (...temperatures: unknown[]) => ({
  data: { stations: temperatures.map((temperature, index) => ({ id: `st${index + 1}`, temperature })) },
});

let upstream: Upstream;
let source: WebApiSource | undefined;

afterEach(async () => {
  await source?.stop();
  source = undefined;
  await upstream.close();
});

async function startSource(options: Partial<WebApiSourceOptions> = {}) {
  upstream = new Upstream();
  const url = await upstream.listen();
  const logger = new RecordingLogger();
  const elements = new Elements();
  source = new WebApiSource({
    url: `${url}?key=secret-query-key`,
    pollIntervalMs: 50,
    timeoutMs: 1_000,
    maxBodyBytes: 64 * 1024,
    retry: { initialMs: 20, maxMs: 100 },
    headers: { authorization: 'Bearer secret-header-token' },
    mapping,
    logger,
    ...options,
  });
  return { source, logger, elements };
}

describe('WebApiSource', () => {
  it('sends conditional requests and publishes only changed content', async () => {
    const { source, elements } = await startSource();
    const lastModified = 'Sat, 07 Mar 2026 10:00:00 GMT';
    upstream.reply = (request, response) =>
      request.headers['if-none-match'] === '"v1"'
        ? status(304)(request, response)
        : json(stations(20.5, 21), { etag: '"v1"', 'last-modified': lastModified })(request, response);
    const first = elements.next();
    const firstRequest = upstream.nextRequest();
    source.start(elements.sink);

    expect((await firstRequest).authorization).toBe('Bearer secret-header-token');
    expect(await first).toEqual([
      {
        id: 'st1',
        sensor: 'https://data.example.org/sensors/st1',
        observedProperty: 'http://example.org/airTemperature',
        featureOfInterest: 'https://data.example.org/stations/st1',
        simpleResult: 20.5,
        unit: 'http://qudt.org/vocab/unit/DEG_C',
      },
      expect.objectContaining({ id: 'st2', simpleResult: 21 }),
    ]);
    const conditional = await upstream.nextRequest();
    expect(conditional['if-none-match']).toBe('"v1"');
    expect(conditional['if-modified-since']).toBe(lastModified);
    await upstream.nextRequest();
    expect(elements.received).toHaveLength(1);
    expect(source.health()).toMatchObject({ state: 'ok', recordsRejected: 0 });
    expect(source.health().lastSuccessAt).not.toBeNull();

    // The same content again, without validators: fetched in full, but no new element.
    upstream.reply = json(stations(20.5, 21));
    await upstream.nextRequest();
    await upstream.nextRequest();
    expect(elements.received).toHaveLength(1);

    upstream.reply = json(stations(20.5, 22));
    const changed = await elements.next();
    expect(changed.map((o) => o.simpleResult)).toEqual([20.5, 22]);
    await upstream.nextRequest();
    await upstream.nextRequest();
    expect(elements.received).toHaveLength(2);
  });

  it('reads CSV by its Content-Type, and publishes the records it can map while counting the others', async () => {
    const { source, elements, logger } = await startSource({ mapping: { ...mapping, records: undefined } });
    upstream.reply = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' });
      response.end('id,temperature\nst1,19.5\nst2,n/a\nst3,-2\n');
    };
    source.start(elements.sink);
    const element = await elements.next();
    expect(element.map((o) => [o.id, o.simpleResult])).toEqual([
      ['st1', 19.5],
      ['st3', -2],
    ]);
    expect(source.health()).toMatchObject({ state: 'ok', recordsRejected: 1 });
    expect(logger.calls).toContainEqual({
      level: 'warn',
      fields: expect.objectContaining({ index: 1, reason: 'result {temperature} must be a number with a unit, got "n/a"' }),
      message: 'record rejected',
    });
  });

  it('degrades on an upstream error, publishes nothing, and recovers', async () => {
    const { source, elements, logger } = await startSource();
    upstream.reply = json(stations(10));
    source.start(elements.sink);
    await elements.next();

    upstream.reply = status(500);
    await upstream.nextRequest();
    await upstream.nextRequest();
    expect(source.health()).toMatchObject({ state: 'degraded', detail: 'upstream answered HTTP 500' });
    expect(elements.received).toHaveLength(1);
    expect(logger.calls).toContainEqual(expect.objectContaining({ level: 'warn', message: 'web API upstream failed' }));

    upstream.reply = json(stations(11));
    expect((await elements.next())[0]?.simpleResult).toBe(11);
    expect(source.health().state).toBe('ok');
    expect(logger.calls).toContainEqual(expect.objectContaining({ level: 'info', message: 'web API upstream recovered' }));
    // Neither the query string nor header values reach the log or /health.
    expect(JSON.stringify(logger.calls)).not.toMatch(/secret/);
  });

  it('gives up on a hanging request after the timeout', async () => {
    const { source, elements } = await startSource({ timeoutMs: 100 });
    upstream.reply = hang;
    source.start(elements.sink);
    await upstream.nextRequest();
    await upstream.nextRequest();
    expect(source.health()).toMatchObject({ state: 'degraded', detail: 'request timed out after 100 ms' });
    expect(elements.received).toHaveLength(0);

    upstream.reply = json(stations(12));
    await elements.next();
    expect(source.health()).toMatchObject({ state: 'ok' });
  });

  it('treats a body over the limit and an unparseable document as upstream errors', async () => {
    const { source, elements } = await startSource({ maxBodyBytes: 100 });
    upstream.reply = (_request, response) => {
      // Chunked, without Content-Length: the limit holds while reading.
      response.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 10; i++) response.write(' '.repeat(50));
      response.end('[]');
    };
    source.start(elements.sink);
    await upstream.nextRequest();
    await upstream.nextRequest();
    expect(source.health()).toMatchObject({ state: 'degraded', detail: 'response body exceeds the limit of 100 bytes' });

    upstream.reply = (_request, response) => response.end('{"data": ');
    await upstream.nextRequest();
    await upstream.nextRequest();
    expect(source.health().detail).toMatch(/^unparseable JSON document: /);

    upstream.reply = json({ data: {} });
    await upstream.nextRequest();
    await upstream.nextRequest();
    expect(source.health().detail).toBe('The document has no "data.stations"');
    expect(elements.received).toHaveLength(0);
  });

  it('reports a refused connection without the URL', async () => {
    const closed = new Upstream();
    const closedUrl = await closed.listen();
    await closed.close();
    const { source, elements, logger } = await startSource({ url: closedUrl });
    source.start(elements.sink);
    await vi.waitUntil(() => logger.calls.length > 0, patience);
    expect(source.health()).toMatchObject({ state: 'degraded', detail: 'request failed: ECONNREFUSED' });
  });

  it('honours Retry-After', async () => {
    const { source, elements } = await startSource();
    upstream.reply = status(429, { 'retry-after': '1' });
    source.start(elements.sink);
    await upstream.nextRequest();
    const refusedAt = Date.now();
    await upstream.nextRequest();
    expect(Date.now() - refusedAt).toBeGreaterThanOrEqual(950);
    expect(source.health()).toMatchObject({ state: 'degraded', detail: 'upstream answered HTTP 429 (rate limited)' });
  });

  it('aborts the request in flight when stopped', async () => {
    const { source, elements } = await startSource();
    let aborted: Promise<unknown> | undefined;
    upstream.reply = (request) => {
      aborted = once(request.socket, 'close');
    };
    source.start(elements.sink);
    await upstream.nextRequest();
    await source.stop();
    await aborted;
    expect(source.health().state).toBe('stopped');
  });
});
