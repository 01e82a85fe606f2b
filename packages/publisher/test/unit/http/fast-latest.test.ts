import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import type { AppContext } from '../../../src/http/app-context.js';
import { fastLatestHandler } from '../../../src/http/fast-latest.js';
import { HeldLongPolls } from '../../../src/http/held-long-polls.js';
import { SocketAnswers } from '../../../src/http/socket-answers.js';
import { LatestResponder } from '../../../src/http/latest-responder.js';
import { MemoryEventLog } from '../../../src/log/memory-event-log.js';
import { loadBundledContext } from '../../../src/model/bundled-context.js';
import { StreamHub } from '../../../src/publish/stream-hub.js';
import { JsonLdWriter } from '../../../src/render/jsonld-writer.js';
import { NegotiationCache } from '../../../src/render/headers/negotiate.js';
import { ManualSource } from '../../../src/source/manual-source.js';
import { noMetrics } from '../../support/no-metrics.js';
import { sampleObservations } from '../../../src/testing/sample-observations.js';
import { patience } from '../../support/patience.js';

const baseUrl = 'http://127.0.0.1:8080';
const iri = `${baseUrl}/streams/parking`;
const config = loadConfig({ argv: ['--max-long-poll-wait-seconds', '30'] });

/** A response in memory: what `writeHead` and `end` were given. */
class FakeResponse extends EventEmitter {
  status: number | undefined;
  headers: Record<string, unknown> | undefined;
  body: Buffer | string | undefined;
  ended = false;
  destroyed = false;
  readonly req = { socket: undefined };

  writeHead(status: number, headers: Record<string, unknown>): this {
    this.status = status;
    this.headers = headers;
    return this;
  }

  end(body?: Buffer | string): this {
    this.body = body;
    this.ended = true;
    this.emit('finish');
    return this;
  }

  destroy(): void {
    this.destroyed = true;
  }
}

const hubs: StreamHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((hub) => hub.stop()));
});

async function setup(options: { maxLongPollWaiters?: number; underPressure?: boolean } = {}) {
  const log = new MemoryEventLog(10, { retainedElements: 100, retainedSeconds: 0 }, { epoch: 'e1' });
  const hub = new StreamHub({
    baseUrl,
    definition: { id: 'parking', title: 'Parking', iri, expectedIntervalMs: 5_000, retainedElements: 100, retainedSeconds: 0 },
    source: new ManualSource(5_000),
    log,
    jsonLd: new JsonLdWriter(loadBundledContext().document, `${baseUrl}/contexts/sosa-stream.jsonld`),
    metrics: noMetrics,
    limits: {
      broadcastBatchSize: 100,
      maxSubscribers: 10,
      maxSubscriberQueueBytes: 1 << 20,
      subscriberStallTimeoutMs: 60_000,
      subscriberProgressCheckMs: 0,
      catchUpBatchElements: 10,
      wsPongTimeoutMs: 60_000,
      maxLongPollWaiters: options.maxLongPollWaiters ?? 10,
      maxDescribedResources: 100,
    },
    onError: (error) => {
      throw error;
    },
  });
  hubs.push(hub);
  await hub.publish(sampleObservations(iri, [1]), new Date());
  const answered: string[] = [];
  const context = {
    hubs: new Map([['parking', hub]]),
    lifecycle: { closing: false },
    metrics: { requestAnswered: (route: string, method: string, status: number) => void answered.push(`${method} ${route} ${status}`) },
  } as unknown as AppContext;
  const responder = new LatestResponder(config, new NegotiationCache(10));
  // Fake responses have no socket: held with their response (tests/integration/held-long-polls.test.ts holds sockets).
  const handle = fastLatestHandler(context, responder, () => options.underPressure ?? false, new HeldLongPolls(context, responder, new SocketAnswers(65_000)), new SocketAnswers(65_000));
  const request = (url: string, headers: Record<string, string> = {}, method = 'GET') => {
    const response = new FakeResponse();
    const handled = handle({ method, url, headers } as IncomingMessage, response as unknown as ServerResponse);
    return { handled, response };
  };
  return { hub, context, answered, request };
}

describe('fastLatestHandler', () => {
  it("answers a GET of /latest at once with the cached element's bytes and headers, and counts it", async () => {
    const { hub, answered, request } = await setup();
    const { handled, response } = request('/streams/parking/latest', { accept: 'text/turtle', 'accept-encoding': 'identity' });
    expect(handled).toBe(true);
    expect(response.status).toBe(200);
    expect(response.body).toBe(hub.latest!.bodies.turtle.identity);
    expect(response.headers).toMatchObject({ etag: hub.latest!.etags.turtle.identity, 'content-type': expect.stringContaining('text/turtle') });
    expect(answered).toEqual(['GET /streams/:id/latest 200']);
  });

  it('takes the format from the query string, and sends no body to a HEAD', async () => {
    const { hub, request } = await setup();
    const { response } = request('/streams/parking/latest?format=ntriples', { 'accept-encoding': 'br' }, 'HEAD');
    expect(response.status).toBe(200);
    expect(response.headers).toMatchObject({ etag: hub.latest!.etags.ntriples.br, 'content-encoding': 'br' });
    expect(response.ended).toBe(true);
    expect(response.body).toBeUndefined();
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const { hub, request } = await setup();
    const { response } = request('/streams/parking/latest', { 'accept-encoding': 'identity', 'if-none-match': hub.latest!.etags.turtle.identity });
    expect(response.status).toBe(304);
    expect(response.body).toBeUndefined();
  });

  it('leaves to Fastify, writing nothing, everything it does not answer at once', async () => {
    const { context, request } = await setup();
    const untouched = (outcome: ReturnType<typeof request>) => {
      expect(outcome.handled).toBe(false);
      expect(outcome.response.status).toBeUndefined();
    };
    untouched(request('/streams/parking/latest', {}, 'POST'));
    untouched(request('/streams/parking/events'));
    untouched(request('/streams/nope/latest'));
    // Errors get Fastify's problem+json.
    untouched(request('/streams/parking/latest', { accept: 'image/png' }));
    untouched(request('/streams/parking/latest?format=xml'));
    context.lifecycle.closing = true;
    untouched(request('/streams/parking/latest'));
    untouched((await setup({ underPressure: true })).request('/streams/parking/latest'));
  });

  it('holds a long-poll until the next element, then answers with it', async () => {
    const { hub, request } = await setup();
    const etag = hub.latest!.etags.turtle.identity;
    const { handled, response } = request('/streams/parking/latest', { 'accept-encoding': 'identity', 'if-none-match': etag, prefer: 'wait=20' });
    expect(handled).toBe(true);
    expect(hub.waiters.size).toBe(1);
    expect(response.ended).toBe(false);
    await hub.publish(sampleObservations(iri, [2]), new Date());
    await vi.waitFor(() => expect(response.ended).toBe(true), patience);
    expect(response.status).toBe(200);
    expect(response.body).toBe(hub.latest!.bodies.turtle.identity);
    expect(response.headers?.etag).not.toBe(etag);
  });

  it('answers nothing to a long-poll whose client went away, and leaves the limit of held long-polls to Fastify', async () => {
    const { hub, request } = await setup({ maxLongPollWaiters: 1 });
    const headers = { 'accept-encoding': 'identity', 'if-none-match': hub.latest!.etags.turtle.identity, prefer: 'wait=20' };
    const first = request('/streams/parking/latest', headers);
    expect(first.handled).toBe(true);
    const second = request('/streams/parking/latest', headers);
    expect(second.handled).toBe(false);
    first.response.emit('close');
    await vi.waitFor(() => expect(hub.waiters.size).toBe(0), patience);
    await hub.publish(sampleObservations(iri, [2]), new Date());
    expect(first.response.status).toBeUndefined();
  });
});
