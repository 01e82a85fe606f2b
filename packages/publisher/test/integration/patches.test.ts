import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DataFactory, Store } from 'n3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Publisher } from '../../src/publisher.js';
import { WebApiSource } from '../../src/source/web-api-source.js';
import { applyPatch, canonical, parseNTriples, readPatch } from '../support/patch-oracle.js';
import { RecordingLogger } from '../support/source-recorder.js';
import { openWs, UpgradeRefused, wsElementIds } from '../support/ws-client.js';
import { freePort, openSse, sampleObservations, type SseConnection, startTestPublisher, type TestPublisher } from '../../src/testing.js';

/** For state no event announces: checked every 10 ms, with a deadline for a broken server, not a measure of speed. */
const patience = { timeout: 30_000, interval: 10 };

const { namedNode, blankNode, literal, quad } = DataFactory;

let running: TestPublisher | undefined;
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await running?.close();
  running = undefined;
});

/** `/latest` as N-Triples (the snapshot of the patches), with the element its ETag names. */
async function latest(streamUrl: string, element?: string): Promise<{ text: string; id: string | undefined }> {
  // A new element's documents are compressed on the thread pool: /latest serves it a moment after its broadcast.
  return vi.waitFor(async () => {
    const answer = await fetch(`${streamUrl}/latest`, { headers: { accept: 'application/n-triples' } });
    if (answer.status !== 200) throw new Error(`/latest answered ${answer.status}`);
    const id = /^"([a-z0-9]+-\d+)-ntriples/.exec(answer.headers.get('etag') ?? '')?.[1];
    if (element !== undefined && id !== element) throw new Error(`/latest serves ${id}, not ${element} yet`);
    return { text: await answer.text(), id };
  }, patience);
}

async function patches(streamUrl: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const connection = await openSse(`${streamUrl}/patches`, headers);
  cleanups.push(() => connection.close());
  return connection;
}

describe('GET /streams/{id}/patches on a real socket', () => {
  it('applying every patch to the snapshot gives the next /latest (RDFC-1.0), in identity and gzip alike', async () => {
    running = await startTestPublisher();
    const stream = running.hub.definition.iri;
    await running.push(sampleObservations(stream, [1, 2]));
    const snapshot = await latest(stream, `${running.hub.log.epoch}-1`);
    expect(snapshot.id).toBe(`${running.hub.log.epoch}-1`);
    const identity = await patches(stream, { 'last-event-id': snapshot.id!, 'accept-encoding': 'identity' });
    const gzip = await patches(stream, { 'last-event-id': snapshot.id!, 'accept-encoding': 'gzip' });
    expect(identity.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(gzip.response.headers['content-encoding']).toBe('gzip');
    await running!.untilSubscribers(2);

    const store = new Store(parseNTriples(snapshot.text));
    // New values, more and fewer observations, the same values again: each element replaces the last.
    const steps = [[1, 3], [5, 6, 7], [5], [5]];
    for (const [index, values] of steps.entries()) {
      const seq = await running.push(sampleObservations(stream, values));
      const [event] = (await identity.waitForEvents(index + 1)).slice(-1);
      const [zipped] = (await gzip.waitForEvents(index + 1)).slice(-1);
      expect(zipped!.data).toBe(event!.data);
      expect(event!.id).toBe(`${running.hub.log.epoch}-${seq}`);
      const patch = readPatch(event!.data);
      expect(patch.headers.get('id')).toBe(`${stream}/elements/${running.hub.log.epoch}-${seq}`);
      expect(patch.headers.get('prev')).toBe(`${stream}/elements/${running.hub.log.epoch}-${seq - 1}`);
      expect(patch.rows).toContain('TX .');
      expect(patch.rows.at(-1)).toBe('TC .');
      applyPatch(store, patch);
      const next = await latest(stream, event!.id);
      expect(await canonical(store.getQuads(null, null, null, null))).toBe(await canonical(parseNTriples(next.text)));
    }
  });

  it('resumes by Last-Event-ID like /events, from the log; the first element has no prev and adds everything', async () => {
    running = await startTestPublisher();
    const stream = running.hub.definition.iri;
    const live = await patches(stream);
    await running!.untilSubscribers(1);
    await running.push(sampleObservations(stream, [1]));
    await running.push(sampleObservations(stream, [2]));
    const [first, second] = await live.waitForEvents(2);
    const firstPatch = readPatch(first!.data);
    expect(firstPatch.headers.has('prev')).toBe(false);
    expect(firstPatch.deleted).toEqual([]);
    const store = new Store();
    applyPatch(store, firstPatch);
    applyPatch(store, readPatch(second!.data));
    expect(await canonical(store.getQuads(null, null, null, null))).toBe(await canonical(parseNTriples((await latest(stream, second!.id)).text)));
    // Caught up from the log: the same patch, byte for byte.
    const resumed = await patches(stream, { 'last-event-id': first!.id! });
    const [replayed] = await resumed.waitForEvents(1);
    expect(replayed).toEqual(second);
  });

  it('skolemises blank nodes: the same genid IRIs in /latest, every format and the patch that removes them', async () => {
    running = await startTestPublisher();
    const { hub } = running;
    const stream = hub.definition.iri;
    const withBlank = (value: number) => [
      quad(namedNode(`${stream}/obs`), namedNode('http://www.w3.org/ns/sosa/hasResult'), blankNode('r')),
      quad(blankNode('r'), namedNode('http://qudt.org/schema/qudt/numericValue'), literal(String(value), namedNode('http://www.w3.org/2001/XMLSchema#integer'))),
    ];
    await hub.publishTriples(withBlank(1), new Date());
    const snapshot = await latest(stream, `${hub.log.epoch}-1`);
    const genid = `${running.url}/.well-known/genid/parking/${hub.log.epoch}-1/1`;
    expect(snapshot.text).not.toMatch(/_:/);
    expect(snapshot.text).toContain(`<${genid}>`);
    const turtle = await (await fetch(`${stream}/latest`, { headers: { accept: 'text/turtle' } })).text();
    expect(turtle).toContain(genid);

    const connection = await patches(stream, { 'last-event-id': snapshot.id! });
    await running.untilSubscribers(1);
    await hub.publishTriples(withBlank(2), new Date());
    await hub.broadcaster.notify();
    const [event] = await connection.waitForEvents(1);
    expect(event!.data).not.toMatch(/_:/);
    const patch = readPatch(event!.data);
    expect(patch.deleted.some((q) => q.subject.value === genid)).toBe(true);
    expect(patch.added.some((q) => q.subject.value === `${running!.url}/.well-known/genid/parking/${hub.log.epoch}-2/1`)).toBe(true);
    const store = new Store(parseNTriples(snapshot.text));
    applyPatch(store, patch);
    expect(await canonical(store.getQuads(null, null, null, null))).toBe(await canonical(parseNTriples((await latest(stream, event!.id)).text)));
  });

  it('counts against maxSubscribers with /events: a subscriber too many gets the shed stream, and 404 for an unknown stream', async () => {
    running = await startTestPublisher({ flags: ['--max-subscribers', '1'] });
    const stream = running.hub.definition.iri;
    await patches(stream);
    await running!.untilSubscribers(1);
    const refused = await patches(stream);
    await refused.ended;
    expect(refused.response.statusCode).toBe(200);
    expect(refused.events.map((event) => event.event)).toEqual(['shed']);
    expect(JSON.parse(refused.events[0]!.data)).toMatchObject({ code: 'PUB_ERR_OVERLOADED' });
    const unknown = await fetch(`${running.url}/streams/nope/patches`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { code: string }).code).toBe('PUB_ERR_STREAM_NOT_FOUND');
  });

  it('runs beside the data WebSocket: each its own feed of the same elements, one maxSubscribers budget, and each told at shutdown in its own terms', async () => {
    running = await startTestPublisher({ flags: ['--max-subscribers', '2', '--sse-retry-ms', '1000', '--shutdown-retry-jitter-ms', '1000'] });
    const stream = running.hub.definition.iri;
    const wsUrl = `${stream.replace(/^http/, 'ws')}/ws?format=ntriples`;
    const feed = await patches(stream);
    const socket = await openWs(wsUrl);
    cleanups.push(() => socket.close());
    await running!.untilSubscribers(2);
    expect(running.subscribers({ transport: 'sse' })).toBe(1);
    expect(running.subscribers({ transport: 'websocket' })).toBe(1);

    const seqs = [await running.push(sampleObservations(stream, [1, 2])), await running.push(sampleObservations(stream, [3]))];
    const ids = seqs.map((seq) => `${running!.hub.log.epoch}-${seq}`);
    const events = await feed.waitForEvents(2);
    const messages = await socket.waitForMessages(2);
    expect(events.map((event) => event.id)).toEqual(ids);
    expect(wsElementIds(messages)).toEqual(ids);
    // The patch feed carries RDF Patch; the WebSocket, whole elements in the format it asked for.
    const patch = readPatch(events[1]!.data);
    expect(patch.headers.get('prev')).toBe(`${stream}/elements/${ids[0]}`);
    expect(messages[1]!.body).not.toContain('H id');
    expect(await canonical(parseNTriples(messages[1]!.body))).toBe(await canonical(parseNTriples((await latest(stream, ids[1])).text)));

    // /patches and /ws count against the same budget: a third subscriber of either is shed.
    const refused = await openWs(wsUrl);
    expect((await refused.closed).code).toBe(1013);
    const refusedFeed = await patches(stream);
    await refusedFeed.ended;
    expect(refusedFeed.events.map((event) => event.event)).toEqual(['shed']);

    expect(await running.publisher.shutdown()).toBe(true);
    running = undefined;
    await feed.ended;
    expect(feed.comments).toContain('shutting down');
    expect(feed.retries.at(-1)).toBeGreaterThanOrEqual(1000);
    const closed = await socket.closed;
    expect(closed.code).toBe(1012);
    expect((JSON.parse(closed.reason) as { retryMs: number }).retryMs).toBeGreaterThanOrEqual(1000);
  });

  it('is offered over the data WebSocket too (?format=patch): the same patch per element, compressed or not, resumable by lastEventId', async () => {
    running = await startTestPublisher();
    const { hub } = running;
    const stream = hub.definition.iri;
    const wsUrl = (query: string) => `${stream.replace(/^http/, 'ws')}/ws?format=patch${query}`;
    await running.push(sampleObservations(stream, [1, 2]));
    const snapshot = await latest(stream, `${hub.log.epoch}-1`);
    const sse = await patches(stream, { 'last-event-id': snapshot.id!, 'accept-encoding': 'identity' });
    const deflated = await openWs(wsUrl(`&lastEventId=${snapshot.id!}`));
    const plain = await openWs(wsUrl(`&lastEventId=${snapshot.id!}`), { perMessageDeflate: false });
    cleanups.push(() => deflated.close(), () => plain.close());
    expect(deflated.extensions).toContain('permessage-deflate');
    expect(plain.extensions).toBe('');
    await running.untilSubscribers(3);

    const store = new Store(parseNTriples(snapshot.text));
    const steps = [[1, 3], [5, 6, 7], [5]];
    for (const [index, values] of steps.entries()) {
      const seq = await running.push(sampleObservations(stream, values));
      const [event] = (await sse.waitForEvents(index + 1)).slice(-1);
      const [message] = (await deflated.waitForMessages(index + 1)).slice(-1);
      const [plainMessage] = (await plain.waitForMessages(index + 1)).slice(-1);
      // `element {id}` and exactly the /patches event's data, whichever way the frame travelled.
      expect(message!.type).toBe('element');
      expect(message!.argument).toBe(`${hub.log.epoch}-${seq}`);
      expect(message!.argument).toBe(event!.id);
      expect(message!.body).toBe(event!.data);
      expect(plainMessage!.text).toBe(message!.text);
      const patch = readPatch(message!.body);
      expect(patch.headers.get('prev')).toBe(`${stream}/elements/${hub.log.epoch}-${seq - 1}`);
      applyPatch(store, patch);
      expect(await canonical(store.getQuads(null, null, null, null))).toBe(await canonical(parseNTriples((await latest(stream, event!.id)).text)));
    }
    // A compressed frame went over the wire (RSV1 set on a text frame).
    expect(deflated.wire.some((chunk) => chunk[0] === 0xc1)).toBe(true);

    // Resumed after the first patch it holds: the rest from the log, byte for byte, no gap, no duplicate.
    const received = deflated.messages.slice();
    const resumed = await openWs(wsUrl(`&lastEventId=${received[0]!.argument!}`));
    cleanups.push(() => resumed.close());
    const replayed = await resumed.waitForMessages(received.length - 1);
    expect(replayed.map((message) => message.text)).toEqual(received.slice(1).map((message) => message.text));
    await running.push(sampleObservations(stream, [8]));
    const [next] = (await resumed.waitForMessages(received.length)).slice(-1);
    expect(next!.body).toBe((await sse.waitForEvents(steps.length + 1)).at(-1)!.data);
    expect(resumed.messages.map((message) => message.type)).toEqual(Array(received.length).fill('element'));
    expect(new Set(wsElementIds(resumed.messages)).size).toBe(received.length);
  });

  it('admits ?format=patch on the data WebSocket only: /events has /patches', async () => {
    running = await startTestPublisher();
    const stream = running.hub.definition.iri;
    const events = await fetch(`${stream}/events?format=patch`);
    expect(events.status).toBe(400);
    expect(((await events.json()) as { code: string }).code).toBe('PUB_ERR_UNKNOWN_FORMAT');
    const refused = await openWs(`${stream.replace(/^http/, 'ws')}/ws?format=patches`).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UpgradeRefused);
    const problem = JSON.parse((refused as UpgradeRefused).body) as { code: string; formats: string[] };
    expect([(refused as UpgradeRefused).status, problem.code]).toEqual([400, 'PUB_ERR_UNKNOWN_FORMAT']);
    expect(problem.formats).toContain('patch');
  });

  it('is advertised in the descriptor, beside the data WebSocket', async () => {
    running = await startTestPublisher();
    const descriptor = await (await fetch(running.hub.definition.iri, { headers: { accept: 'application/n-triples' } })).text();
    expect(descriptor).toContain(`<${running.hub.definition.iri}/patches>`);
    expect(descriptor).toContain('<https://www.iana.org/assignments/media-types/application/rdf-patch>');
    expect(descriptor).toContain(`<${running.hub.definition.iri.replace(/^http/, 'ws')}/ws?format=turtle>`);
    expect(descriptor).toContain(`<${running.hub.definition.iri.replace(/^http/, 'ws')}/ws?format=patch>`);
  });
});

/** A parking API: the current free spaces of 13 facilities, changed by the test. */
class ParkingApi {
  readonly spaces = Array.from({ length: 13 }, (_, index) => 100 + index);
  body: (() => string) | undefined;
  requests = 0;
  readonly server: Server = createServer((_request, response) => {
    this.requests++;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(this.body?.() ?? JSON.stringify(this.spaces.map((free, index) => ({ id: `f${index + 1}`, free }))));
  });

  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/parking`;
  }

  /** Resolves once `count` more requests have been answered. */
  async answered(count: number): Promise<void> {
    const target = this.requests + count;
    await vi.waitUntil(() => this.requests >= target, patience);
  }
}

async function startStatePublisher(): Promise<{ publisher: Publisher; stream: string; api: ParkingApi; url: string }> {
  const api = new ParkingApi();
  const apiUrl = await api.listen();
  cleanups.push(async () => {
    api.server.closeAllConnections();
    api.server.close();
  });
  // The source mints its observations' IRIs under the stream's: the port is chosen first.
  const port = await freePort();
  const stream = `http://127.0.0.1:${port}/streams/parking`;
  const source = new WebApiSource({
    url: apiUrl,
    pollIntervalMs: 20,
    timeoutMs: 1_000,
    maxBodyBytes: 64 * 1024,
    retry: { initialMs: 20, maxMs: 40 },
    mapping: {
      sensor: 'https://data.example.org/sensors/{id}',
      observedProperty: 'http://vocab.datex.org/terms#parkingNumberOfVacantSpaces',
      featureOfInterest: 'https://data.example.org/facilities/{id}',
      result: '{free}',
      id: '{id}',
    },
    stateIriBase: `${stream}/observations/`,
    logger: new RecordingLogger(),
  });
  const started = await startTestPublisher({ port, source });
  cleanups.push(() => started.close());
  expect(started.streamUrl).toBe(stream);
  return { publisher: started.publisher, stream, api, url: started.url };
}

describe('/patches of a state source (a web API of 13 facilities)', () => {
  it('carries only the triples that changed, sends nothing while nothing changes, and keeps the last good state through malformed JSON', async () => {
    const { publisher, stream, api, url } = await startStatePublisher();
    const hub = publisher.hubs.get('parking')!;
    await vi.waitUntil(() => hub.log.latestSeq === 1, patience);
    const snapshot = await latest(stream, `${hub.log.epoch}-1`);
    expect(snapshot.text).toContain(`<${stream}/observations/f1>`);
    const connection = await patches(stream, { 'last-event-id': snapshot.id! });
    const store = new Store(parseNTriples(snapshot.text));

    // Unchanged upstream: polled, and nothing is published or sent.
    await api.answered(3);
    expect(hub.log.latestSeq).toBe(1);

    // Malformed JSON: degraded in /health, the last good state kept, nothing sent.
    api.body = () => '{"broken": ';
    await api.answered(2);
    const health = (await (await fetch(`${url}/health`)).json()) as { streams: Record<string, { source: { state: string; detail?: string } }> };
    expect(health.streams.parking!.source.state).toBe('degraded');
    expect(health.streams.parking!.source.detail).toMatch(/unparseable JSON/);
    expect(hub.log.latestSeq).toBe(1);
    expect((await latest(stream)).text).toBe(snapshot.text);

    // One facility of 13 changes: its result and result time leave and enter, with the element's time.
    api.body = undefined;
    api.spaces[4] = 7;
    await vi.waitUntil(() => hub.log.latestSeq === 2, patience);
    const [event] = await connection.waitForEvents(1);
    expect(connection.events.filter((e) => e.event === undefined)).toHaveLength(1);
    const patch = readPatch(event!.data);
    const subjects = (quads: typeof patch.added) => [...new Set(quads.map((q) => q.subject.value))].sort();
    const elements = [1, 2].map((seq) => `${stream}/elements/${hub.log.epoch}-${seq}`);
    expect(subjects(patch.deleted)).toEqual([`${stream}/observations/f5`, elements[0]].sort());
    expect(subjects(patch.added)).toEqual([`${stream}/observations/f5`, elements[1]].sort());
    expect(patch.deleted.map((q) => q.predicate.value).sort()).toEqual([
      'http://www.w3.org/ns/prov#generatedAtTime',
      'http://www.w3.org/ns/sosa/hasSimpleResult',
      'http://www.w3.org/ns/sosa/resultTime',
    ]);
    expect(patch.added.find((q) => q.predicate.value.endsWith('hasSimpleResult'))?.object.value).toBe('7');
    applyPatch(store, patch);
    expect(await canonical(store.getQuads(null, null, null, null))).toBe(await canonical(parseNTriples((await latest(stream, event!.id)).text)));
    expect((await (await fetch(`${url}/health`)).json()) as object).toMatchObject({ streams: { parking: { source: { state: 'ok' } } } });
  });
});
