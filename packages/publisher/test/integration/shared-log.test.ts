import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { formatNames, mediaTypes } from '@rdf-stream/protocol';
import { openSse, startTestPublisher, type TestPublisher } from '../../src/testing.js';
import { readProblem } from '../support/problem.js';
import { PrivateRedis } from '../support/private-redis.js';

/**
 * Two publisher instances on one Redis (a real Valkey, AOF on): they serve one stream as one.
 * Both mint IRIs under the same base URL (what clients use, a proxy in front of both); the tests
 * reach each instance at its own port.
 */
const BASE_URL = 'http://streams.example';
const TOKEN = 'shared-log-ingest-token-0123456789';
const INGEST_STREAM = 'streams:\n  - id: sensors\n    title: Sensors pushing their observations\n    shape: none\n    source: { kind: ingest, tokenEnv: INGEST_TOKEN }\n';

let server: PrivateRedis;
const cleanups: Array<() => unknown> = [];
let prefixes = 0;

beforeAll(async () => {
  server = await PrivateRedis.start();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  // A test that failed while the server was down must not take the next one with it.
  if (!server.running) await server.restart();
});
afterAll(async () => {
  await server.close();
});

interface Instance extends TestPublisher {
  /** `http://127.0.0.1:{port}`: this instance itself. */
  readonly direct: string;
}

async function instances(count: number, options: { ingest?: boolean; flags?: readonly string[] } = {}): Promise<Instance[]> {
  const prefix = `shared${++prefixes}`;
  const started: Instance[] = [];
  for (let index = 0; index < count; index++) {
    const publisher = await startTestPublisher({
      flags: ['--log', 'redis', '--redis-url', server.url, '--redis-key-prefix', prefix, '--base-url', BASE_URL, '--redis-read-block-ms', '200', ...(options.flags ?? [])],
      ...(options.ingest === true ? { config: INGEST_STREAM, env: { INGEST_TOKEN: TOKEN } } : {}),
    });
    cleanups.push(() => publisher.close());
    started.push({ ...publisher, direct: `http://127.0.0.1:${publisher.config.port}` });
  }
  return started;
}

/** Resolves once `instance`'s `/latest` serves element `seq` (it read it from the shared log). */
const served = (instance: TestPublisher, seq: number) => instance.hub.latestCache.reached(seq);

const get = (url: string, accept: string = mediaTypes.turtle) => fetch(url, { headers: { accept, 'accept-encoding': 'identity' } });

function ingest(instance: Instance, body: string, key?: string): Promise<Response> {
  return fetch(`${instance.direct}/streams/sensors`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/turtle', ...(key === undefined ? {} : { 'idempotency-key': key }) },
    body,
  });
}

const observation = (n: number) =>
  `@prefix sosa: <http://www.w3.org/ns/sosa/> .\n<http://example.org/obs/${n}> a sosa:Observation ; sosa:hasSimpleResult ${n} .\n`;

describe('two instances on one shared log', () => {
  it('serve the same elements, ids, ETags, /latest bytes, descriptor and history pages', async () => {
    const [a, b] = (await instances(2)) as [Instance, Instance];
    expect(b.hub.log.epoch).toBe(a.hub.log.epoch);
    await a.push([1, 2]);
    await b.push([3, 4]);
    await a.push([5, 6]);
    await served(a, 3);
    await served(b, 3);
    const epoch = a.hub.log.epoch;
    for (const path of ['/streams/parking/latest', `/streams/parking/elements/${epoch}-2`, '/streams/parking', '/streams/parking/history', `/streams/parking/history/${epoch}-1`]) {
      for (const format of formatNames) {
        const [fromA, fromB] = await Promise.all([get(`${a.direct}${path}`, mediaTypes[format]), get(`${b.direct}${path}`, mediaTypes[format])]);
        expect([fromA.status, fromB.status], `${path} ${format}`).toEqual([200, 200]);
        expect(fromB.headers.get('etag'), `${path} ${format}`).toBe(fromA.headers.get('etag'));
        expect(await fromB.text(), `${path} ${format}`).toBe(await fromA.text());
      }
    }
    const latest = await (await get(`${b.direct}/streams/parking/latest`, mediaTypes.ntriples)).text();
    expect(latest).toContain(`<${BASE_URL}/streams/parking/elements/${epoch}-3>`);
  });

  it('resume a subscriber on the other instance with Last-Event-ID: no gap, no duplicate', async () => {
    const [a, b] = (await instances(2)) as [Instance, Instance];
    const epoch = a.hub.log.epoch;
    const onA = await openSse(`${a.direct}/streams/parking/events?format=ntriples`);
    await a.untilSubscribers(1);
    await a.push();
    await b.push();
    const first = await onA.waitForEvents(2);
    expect(first.map((event) => event.id)).toEqual([`${epoch}-1`, `${epoch}-2`]);
    // Instance A goes away; meanwhile B publishes on; the client comes back to B with its last id.
    await a.close();
    await b.push();
    await b.push();
    const onB = await openSse(`${b.direct}/streams/parking/events?format=ntriples`, { 'last-event-id': `${epoch}-2` });
    cleanups.push(() => onB.close());
    await b.push();
    const resumed = await onB.waitForEvents(3);
    expect(resumed.map((event) => event.id)).toEqual([`${epoch}-3`, `${epoch}-4`, `${epoch}-5`]);
    expect(onB.response.headers['stream-gap']).toBeUndefined();
  });

  it('number ingested elements densely whichever instance takes them, and a retried Idempotency-Key on the other instance gets the first answer', async () => {
    const [a, b] = (await instances(2, { ingest: true })) as [Instance, Instance];
    // 60 at once, half on each: every race for a number is lost by one of them, which renders again.
    const answers = await Promise.all(Array.from({ length: 60 }, (_, n) => ingest(n % 2 === 0 ? a : b, observation(n), `key-${n}`)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(60).fill(201));
    const seqs = (await Promise.all(answers.map(async (answer) => ((await answer.json()) as { seq: number }).seq))).sort((x, y) => x - y);
    expect(seqs).toEqual(Array.from({ length: 60 }, (_, n) => n + 1));
    // The retry of key-3 (answered by B) arrives at A: the same element, never a second one.
    const first = await ingest(b, observation(3), 'key-3');
    const retried = await ingest(a, observation(3), 'key-3');
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(await retried.json()).toEqual(await first.json());
    const reused = await ingest(a, observation(99), 'key-3');
    expect(reused.status).toBe(422);
    expect((await readProblem(reused)).code).toBe('PUB_ERR_IDEMPOTENCY_KEY_REUSED');
    await served(a, 60);
  });

  it('share Solid notification channels: subscribed on one, received from the other, and kept across a restart', async () => {
    const [a, b] = (await instances(2)) as [Instance, Instance];
    const answer = await fetch(`${a.direct}/notifications/eventsource`, {
      method: 'POST',
      headers: { 'content-type': 'application/ld+json' },
      body: JSON.stringify({ '@context': ['https://www.w3.org/ns/solid/notification/v1'], type: 'EventSourceChannel2023', topic: `${BASE_URL}/streams/parking` }),
    });
    expect(answer.status).toBe(200);
    const { receiveFrom } = (await answer.json()) as { receiveFrom: string };
    expect(receiveFrom.startsWith(`${BASE_URL}/`)).toBe(true);
    const path = new URL(receiveFrom).pathname;
    const onB = await openSse(`${b.direct}${path}`);
    cleanups.push(() => onB.close());
    await a.push();
    const [notification] = await onB.waitForEvents(1);
    expect(JSON.parse(notification!.data)).toMatchObject({ type: 'Add', object: `${BASE_URL}/streams/parking/elements/${a.hub.log.epoch}-1`, state: `${a.hub.log.epoch}-1` });
    // A restarted instance still knows the channel.
    onB.close();
    await b.restart();
    const again = await openSse(`${b.direct}${path}`);
    cleanups.push(() => again.close());
    await a.push();
    const [next] = await again.waitForEvents(1);
    expect(JSON.parse(next!.data)).toMatchObject({ state: `${a.hub.log.epoch}-2` });
  });
});

describe('when the shared log server fails', () => {
  it('instances keep serving and subscribers stay connected while ingest runs on; ingest answers 503 with Retry-After; after it returns, nothing acknowledged is lost or doubled', async () => {
    const [a, b] = (await instances(2, { ingest: true })) as [Instance, Instance];
    const subscriber = await openSse(`${a.direct}/streams/sensors/events?format=ntriples`);
    cleanups.push(() => subscriber.close());
    await a.untilSubscribers(1, { stream: 'sensors' });
    const acknowledged = new Map<string, number>();
    const statuses: number[] = [];
    let sent = 0;
    const send = async (instance: Instance) => {
      const key = `k${sent++}`;
      const answer = await ingest(instance, observation(sent), key);
      statuses.push(answer.status);
      if (answer.status === 201) acknowledged.set(key, ((await answer.json()) as { seq: number }).seq);
      else await answer.arrayBuffer();
      return answer;
    };
    // Four clients POST back to back, to both instances, for the whole test.
    let running = true;
    const clients = Array.from({ length: 4 }, async (_, client) => {
      while (running) await send(client % 2 === 0 ? a : b);
    });
    cleanups.push(async () => {
      running = false;
      await Promise.allSettled(clients);
    });
    await vi.waitUntil(() => acknowledged.size >= 20, { timeout: 10_000, interval: 10 });

    await server.kill();
    const refused = await ingest(b, observation(0), 'refused-while-down');
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBeTruthy();
    expect((await readProblem(refused)).code).toBe('PUB_ERR_LOG_UNAVAILABLE');
    const health = (await (await fetch(`${a.direct}/health`)).json()) as { streams: Record<string, { log: { state: string } }> };
    expect(health.streams.sensors?.log.state).toBe('degraded');
    expect(await (await fetch(`${b.direct}/metrics`)).text()).toMatch(/^rdf_stream_log_up\{stream="sensors"\} 0$/m);
    // What the instances hold is still served, and the subscriber is still connected.
    expect((await get(`${a.direct}/streams/sensors/latest`)).status).toBe(200);
    expect(a.subscribers({ stream: 'sensors' })).toBe(1);

    const beforeRestart = acknowledged.size;
    await server.restart();
    await vi.waitUntil(() => acknowledged.size >= beforeRestart + 20, { timeout: 15_000, interval: 10 });
    running = false;
    await Promise.all(clients);
    expect(statuses.filter((status) => status !== 201 && status !== 503)).toEqual([]);
    expect(statuses.filter((status) => status === 503).length).toBeGreaterThan(0);

    // Every acknowledged element once, under its own key; numbers dense; the subscriber saw each once, in order.
    const newest = Math.max(...acknowledged.values());
    expect(new Set(acknowledged.values()).size).toBe(acknowledged.size);
    await served(a, newest);
    const stored = await a.hub.log.read(1, newest);
    expect(stored.map((element) => element.seq)).toEqual(Array.from({ length: newest }, (_, n) => n + 1));
    for (const [key, seq] of acknowledged) expect(stored[seq - 1]?.idempotency?.key, key).toBe(key);
    const events = await subscriber.waitForEvents(newest);
    const epoch = a.hub.log.epoch;
    expect(events.map((event) => event.id)).toEqual(Array.from({ length: newest }, (_, n) => `${epoch}-${n + 1}`));
  });

  it('restarted empty: a new epoch, and every subscriber gets the explicit epoch gap when it comes back', async () => {
    const [a, b] = (await instances(2)) as [Instance, Instance];
    const oldEpoch = a.hub.log.epoch;
    await a.push();
    await served(b, 1);
    const subscriber = await openSse(`${b.direct}/streams/parking/events?format=ntriples`);
    cleanups.push(() => subscriber.close());
    await b.untilSubscribers(1);
    await a.push();
    await subscriber.waitForEvents(1);
    const newEpoch = new Promise<string>((resolve) => b.hub.log.onEpochChanged?.(resolve));
    await server.wipe();
    await server.restart();
    const epoch = await newEpoch;
    expect(epoch).not.toBe(oldEpoch);
    // The subscriber's stream was ended; it comes back with its last id, of the old epoch.
    await b.untilSubscribers(0);
    await vi.waitUntil(() => a.hub.log.epoch === epoch, { timeout: 10_000, interval: 50 });
    await a.push();
    await served(b, 1);
    const back = await openSse(`${b.direct}/streams/parking/events?format=ntriples`, { 'last-event-id': `${oldEpoch}-2` });
    cleanups.push(() => back.close());
    expect(back.response.headers['stream-gap']).toBe(`epoch; requested=${oldEpoch}-2; oldest=${epoch}-1`);
    const [gap, element] = await back.waitForEvents(2);
    expect(gap).toMatchObject({ event: 'gap' });
    expect(JSON.parse(gap!.data)).toEqual({ requestedId: `${oldEpoch}-2`, oldestRetained: `${epoch}-1`, reason: 'epoch' });
    expect(element?.id).toBe(`${epoch}-1`);
  });
});
