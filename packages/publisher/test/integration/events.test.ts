import { connect } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { EventSource } from 'eventsource';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { elementQuads } from '../../src/model/observation.js';
import { expectIsomorphic, flatten, parseRdf } from '../support/rdf.js';
import { readProblem } from '../support/problem.js';
import { elementIds, openSse, sampleObservations, startTestPublisher, type TestPublisher } from '../../src/testing.js';

/** For state no event announces: checked every 10 ms, with a deadline for a broken server, not a measure of speed. */
const patience = { timeout: 30_000, interval: 10 };

let running: TestPublisher | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const eventsUrl = (query = '') => `${running!.url}/streams/parking/events${query}`;
/** Ids of elements of the running publisher's log: `{epoch}-{seq}`. */
const ids = (...seqs: number[]) => seqs.map((seq) => `${running!.hub.log.epoch}-${seq}`);
const range = (from: number, count: number) => ids(...Array.from({ length: count }, (_, index) => from + index));

describe('GET /streams/{id}/events on a real socket', () => {
  it('delivers elements to a real EventSource (eventsource package), JSON-LD by default', async () => {
    running = await startTestPublisher();
    const source = new EventSource(eventsUrl());
    const received: MessageEvent[] = [];
    const opened = new Promise((resolve, reject) => {
      source.onopen = resolve;
      source.onerror = reject;
    });
    const two = new Promise<void>((resolve) => {
      source.onmessage = (event) => {
        received.push(event);
        if (received.length === 2) resolve();
      };
    });
    await opened;
    await running!.untilSubscribers(1);
    const generatedAt = new Date();
    const observations = sampleObservations(running.hub.definition.iri, [1, 2, 3]);
    await running.push(observations, generatedAt);
    await running.push();
    await two;
    source.close();
    expect(running.hub.log.epoch).toMatch(/^[a-z0-9]{10}$/);
    expect(received.map((event) => event.lastEventId)).toEqual(ids(1, 2));
    const quads = await parseRdf('jsonld', received[0]!.data);
    expectIsomorphic(quads, elementQuads(`${running.hub.definition.iri}/elements/${running.hub.log.epoch}-1`, generatedAt, observations));
  });

  it('sends retry: and an ok comment at once, with headers that keep proxies from buffering', async () => {
    running = await startTestPublisher({ flags: ['--sse-retry-ms', '3456'] });
    const connection = await openSse(eventsUrl());
    expect(connection.response.statusCode).toBe(200);
    expect(connection.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(connection.response.headers['cache-control']).toBe('no-store');
    expect(connection.response.headers['x-accel-buffering']).toBe('no');
    expect(connection.response.headers['access-control-allow-origin']).toBe('*');
    await vi.waitUntil(() => connection.comments.length > 0, patience);
    expect(connection.retries).toEqual([3456]);
    expect(connection.comments[0]).toBe('ok');
    connection.close();
  });

  it('serves the format chosen by ?format=', async () => {
    running = await startTestPublisher();
    const connection = await openSse(eventsUrl('?format=turtle'));
    await running!.untilSubscribers(1);
    const generatedAt = new Date();
    const observations = sampleObservations(running.hub.definition.iri);
    await running.push(observations, generatedAt);
    const [event] = await connection.waitForEvents(1);
    const quads = await parseRdf('turtle', event!.data);
    expect(event!.id).toBe(ids(1)[0]);
    expectIsomorphic(quads, flatten(elementQuads(`${running.hub.definition.iri}/elements/${running.hub.log.epoch}-1`, generatedAt, observations)));
    connection.close();
  });

  it('400 problem+json for an unknown format', async () => {
    running = await startTestPublisher();
    const response = await fetch(eventsUrl('?format=rdfxml'));
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json(; charset=utf-8)?$/);
    expect((await readProblem(response)).code).toBe('PUB_ERR_UNKNOWN_FORMAT');
  });

  it('sends heartbeat comments', async () => {
    running = await startTestPublisher({ flags: ['--heartbeat-ms', '1000'] });
    const connection = await openSse(eventsUrl());
    await vi.waitUntil(() => connection.comments.length >= 2, { timeout: 10_000, interval: 10 });
    expect(connection.comments[1]).toBe('');
    connection.close();
  });
});

describe('framing on the wire', () => {
  /**
   * Sends `request` on a raw connection, publishes one element once it is subscribed, shuts the
   * publisher down, and returns everything the server sent (head and body) and the element's id.
   */
  async function oneElementThenShutdown(request: string) {
    running = await startTestPublisher();
    const socket = connect(Number(new URL(running.url).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1'))));
    socket.write(request);
    await running!.untilSubscribers(1);
    await running.push();
    await vi.waitUntil(() => Buffer.concat(chunks).toString('latin1').includes('id: '), patience);
    const [first] = ids(1);
    await running.close();
    running = undefined;
    const text = await closed;
    const headEnd = text.indexOf('\r\n\r\n');
    return { first: first!, head: text.slice(0, headEnd), body: text.slice(headEnd + 4) };
  }

  it('HTTP/1.1: every event is one well-formed chunk, and the stream ends with the last chunk', async () => {
    const { first, head, body } = await oneElementThenShutdown('GET /streams/parking/events?format=ntriples HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(head.toLowerCase()).toContain('transfer-encoding: chunked');
    // Walk the chunks: each size line matches the bytes that follow it, and a 0 chunk ends it all.
    const events: string[] = [];
    let rest = body;
    for (;;) {
      const sizeEnd = rest.indexOf('\r\n');
      const size = Number.parseInt(rest.slice(0, sizeEnd), 16);
      expect(Number.isNaN(size)).toBe(false);
      if (size === 0) {
        expect(rest.slice(sizeEnd)).toBe('\r\n\r\n');
        break;
      }
      events.push(rest.slice(sizeEnd + 2, sizeEnd + 2 + size));
      expect(rest.slice(sizeEnd + 2 + size, sizeEnd + 4 + size)).toBe('\r\n');
      rest = rest.slice(sizeEnd + 4 + size);
    }
    expect(events[0]).toMatch(/^: ok\nretry: \d+\n\n$/);
    expect(events[1]).toMatch(new RegExp(`^id: ${first}\n`));
    expect(events.at(-1)).toMatch(/retry: \d+\n\n$/);
  });

  it('HTTP/1.0: the events as they are, no chunked framing, the end of the stream closes the connection', async () => {
    const { first, head, body } = await oneElementThenShutdown('GET /streams/parking/events?format=ntriples HTTP/1.0\r\n\r\n');
    expect(head.toLowerCase()).not.toContain('transfer-encoding');
    expect(body).toMatch(new RegExp(`^: ok\nretry: \\d+\n\nid: ${first}\ndata: `));
    expect(body).toMatch(/\n\n: shutting down\nretry: \d+\n\n$/);
  });
});

describe('compressed event streams (Accept-Encoding: gzip)', () => {
  it('compresses the stream with gzip, every event decodable as it arrives', async () => {
    running = await startTestPublisher({ flags: ['--heartbeat-ms', '1000'] });
    const identity = await openSse(eventsUrl('?format=turtle'));
    const gzipped = await openSse(eventsUrl('?format=turtle'), { 'accept-encoding': 'gzip, deflate, br' });
    expect(gzipped.response.headers['content-encoding']).toBe('gzip');
    expect(gzipped.response.headers['vary']).toMatch(/Accept-Encoding/);
    expect(identity.response.headers['content-encoding']).toBeUndefined();
    expect(identity.response.headers['vary']).toMatch(/Accept-Encoding/);
    await running!.untilSubscribers(2);
    // One element at a time: the first is decoded before the second exists.
    const generatedAt = new Date();
    const observations = sampleObservations(running.hub.definition.iri, [1, 2, 3, 4, 5, 6, 7, 8]);
    await running.push(observations, generatedAt);
    const [first] = await gzipped.waitForEvents(1);
    await identity.waitForEvents(1);
    await running.push();
    await gzipped.waitForEvents(2);
    await identity.waitForEvents(2);
    await vi.waitUntil(() => gzipped.comments.length >= 2 && identity.comments.length >= 2, { timeout: 10_000, interval: 10 });
    expect(gzipped.events).toEqual(identity.events);
    expect(gzipped.retries).toEqual(identity.retries);
    expect(gzipped.comments[0]).toBe('ok');
    expectIsomorphic(
      await parseRdf('turtle', first!.data),
      flatten(elementQuads(`${running.hub.definition.iri}/elements/${running.hub.log.epoch}-1`, generatedAt, observations)),
    );
    // What the wire carries: the compressed stream is a fraction of the plain one.
    const bytes = (wire: Buffer[]) => wire.reduce((sum, chunk) => sum + chunk.length, 0);
    expect(bytes(gzipped.wire)).toBeLessThan(bytes(identity.wire) / 2);
    gzipped.close();
    identity.close();
  });

  it('a stream the publisher ends (shutdown) is one whole gzip body, its trailer checked', async () => {
    running = await startTestPublisher();
    const gzipped = await openSse(eventsUrl('?format=turtle'), { 'accept-encoding': 'gzip' });
    await running!.untilSubscribers(1);
    await running.push();
    await running.push();
    await gzipped.waitForEvents(2);
    await running.close();
    running = undefined;
    await gzipped.ended;
    // gunzipSync checks the CRC-32 and the length of everything the connection was sent.
    const body = gunzipSync(Buffer.concat(gzipped.wire)).toString();
    expect(body.startsWith(': ok\n')).toBe(true);
    expect(body).toMatch(/retry: \d+\n\n$/);
    expect([...body.matchAll(/^id: (.+)$/gm)].map((match) => match[1])).toEqual(gzipped.events.map((event) => event.id));
  });

  it('resumes by Last-Event-ID with the replay compressed too, no gap, no duplicate', async () => {
    running = await startTestPublisher();
    for (let index = 0; index < 20; index++) await running.push();
    const resumed = await openSse(eventsUrl(`?lastEventId=${ids(5)[0]}`), { 'accept-encoding': 'gzip' });
    const pending: Array<Promise<number>> = [];
    for (let index = 0; index < 10; index++) pending.push(running.push());
    await Promise.all(pending);
    await resumed.waitForEvents(25);
    expect(resumed.response.headers['content-encoding']).toBe('gzip');
    expect(elementIds(resumed.events)).toEqual(range(6, 25));
    resumed.close();
  });

  it('a gap event reaches a gzip subscriber compressed, with the Stream-Gap header', async () => {
    running = await startTestPublisher();
    await running.push();
    const resumed = await openSse(eventsUrl(), { 'accept-encoding': 'gzip', 'last-event-id': 'otherepoch-3' });
    await resumed.waitForEvents(2);
    expect(resumed.response.headers['stream-gap']).toMatch(/^epoch;/);
    expect(resumed.events[0]!.event).toBe('gap');
    expect(elementIds(resumed.events)).toEqual(ids(1));
    resumed.close();
  });

  it('406 problem+json when the client refuses both gzip and identity', async () => {
    running = await startTestPublisher();
    const response = await fetch(eventsUrl(), { headers: { 'accept-encoding': 'br, identity;q=0' } });
    expect(response.status).toBe(406);
    const problem = await readProblem(response);
    expect(problem.code).toBe('PUB_ERR_NOT_ACCEPTABLE');
    expect(problem.acceptable).toEqual(['gzip', 'identity']);
  });

  it('the eventsource package (fetch underneath) gets the stream compressed and reads it', async () => {
    running = await startTestPublisher();
    let contentEncoding: string | null = null;
    const source = new EventSource(eventsUrl('?format=ntriples'), {
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        contentEncoding = response.headers.get('content-encoding');
        return response;
      },
    });
    const received: string[] = [];
    const two = new Promise<void>((resolve) => {
      source.onmessage = (event) => {
        received.push(event.lastEventId);
        if (received.length === 2) resolve();
      };
    });
    await new Promise((resolve) => (source.onopen = resolve));
    await running!.untilSubscribers(1);
    await running.push();
    await running.push();
    await two;
    source.close();
    expect(contentEncoding).toBe('gzip');
    expect(received).toEqual(ids(1, 2));
  });
});

describe('resuming by Last-Event-ID', () => {
  it('after a disconnect, delivers every later element exactly once, in order', async () => {
    running = await startTestPublisher();
    const first = await openSse(eventsUrl());
    await running!.untilSubscribers(1);
    for (let index = 0; index < 3; index++) await running.push();
    await first.waitForEvents(3);
    first.close();
    await running!.untilSubscribers(0);
    await running.push();
    await running.push();
    const lastSeen = first.events[2]!.id!;
    const resumed = await openSse(eventsUrl(), { 'last-event-id': lastSeen });
    await resumed.waitForEvents(2);
    await running.push();
    await resumed.waitForEvents(3);
    expect(elementIds(first.events)).toEqual(ids(1, 2, 3));
    expect(elementIds(resumed.events)).toEqual(ids(4, 5, 6));
    resumed.close();
  });

  it('has no gap and no duplicate at the seam, with elements published while replay is under way', async () => {
    running = await startTestPublisher();
    for (let index = 0; index < 50; index++) await running.push();
    const pending: Array<Promise<number>> = [];
    const resumed = await openSse(eventsUrl(`?lastEventId=${ids(10)[0]}`));
    // Publish concurrently with the replay of 11..50 and the switch to live.
    for (let index = 0; index < 30; index++) pending.push(running.push());
    await Promise.all(pending);
    await resumed.waitForEvents(70);
    expect(elementIds(resumed.events)).toEqual(range(11, 70));
    resumed.close();
  });

  it('prefers the Last-Event-ID header (sent on reconnect) over the query parameter', async () => {
    running = await startTestPublisher();
    for (let index = 0; index < 5; index++) await running.push();
    const [one, three] = ids(1, 3);
    const resumed = await openSse(eventsUrl(`?lastEventId=${one}`), { 'last-event-id': three! });
    await resumed.waitForEvents(2);
    expect(elementIds(resumed.events)).toEqual(ids(4, 5));
    resumed.close();
  });

  it('says so, with a header and a gap event, when the id is older than what is retained', async () => {
    // Pages of one element: retention keeps exactly the 3 newest.
    running = await startTestPublisher({ flags: ['--retained-elements', '3', '--page-elements', '1'] });
    for (let index = 0; index < 10; index++) await running.push();
    const [two, eight] = ids(2, 8);
    const resumed = await openSse(eventsUrl(), { 'last-event-id': two! });
    expect(resumed.response.headers['stream-gap']).toBe(`expired; requested=${two}; oldest=${eight}`);
    const events = await resumed.waitForEvents(4);
    expect(events[0]).toMatchObject({ event: 'gap' });
    expect(JSON.parse(events[0]!.data)).toEqual({ requestedId: two, oldestRetained: eight, reason: 'expired' });
    expect(elementIds(events)).toEqual(ids(8, 9, 10));
    resumed.close();
  });

  it('treats an id of this log newer than anything published as unknown', async () => {
    running = await startTestPublisher();
    await running.push();
    const [unpublished, one] = ids(999, 1);
    const resumed = await openSse(eventsUrl(), { 'last-event-id': unpublished! });
    expect(resumed.response.headers['stream-gap']).toBe(`unknown; requested=${unpublished}; oldest=${one}`);
    const events = await resumed.waitForEvents(2);
    expect(events[0]?.event).toBe('gap');
    expect(JSON.parse(events[0]!.data)).toEqual({ requestedId: unpublished, oldestRetained: one, reason: 'unknown' });
    expect(elementIds(events)).toEqual(ids(1));
    resumed.close();
  });

  it.each([
    ['a bare number (an id from before ids carried their epoch)', (_epoch: string) => '3'],
    ['an id of another life of the log (e.g. a replaced data directory)', (epoch: string) => `${epoch.startsWith('a') ? 'b' : 'a'}${epoch.slice(1)}-3`],
  ])('says the ids changed (reason epoch) for %s, even though its number is retained, and replays all that is retained', async (_what, requested) => {
    running = await startTestPublisher();
    for (let index = 0; index < 5; index++) await running.push();
    const requestedId = requested(running.hub.log.epoch);
    const [one] = ids(1);
    const resumed = await openSse(eventsUrl(), { 'last-event-id': requestedId });
    expect(resumed.response.statusCode).toBe(200);
    expect(resumed.response.headers['stream-gap']).toBe(`epoch; requested=${requestedId}; oldest=${one}`);
    const events = await resumed.waitForEvents(6);
    expect(events[0]?.event).toBe('gap');
    expect(JSON.parse(events[0]!.data)).toEqual({ requestedId, oldestRetained: one, reason: 'epoch' });
    expect(elementIds(events)).toEqual(ids(1, 2, 3, 4, 5));
    resumed.close();
  });
});

describe('slow subscribers', () => {
  it('a subscriber that never reads is evicted at maxSubscriberQueueBytes while others keep receiving', async () => {
    running = await startTestPublisher({ flags: ['--max-subscriber-queue-bytes', String(256 * 1024)] });
    const reader = await openSse(eventsUrl('?format=ntriples'));
    // A raw client that sends its request and then never reads a byte.
    const stalled = connect(Number(new URL(running.url).port), '127.0.0.1');
    stalled.write('GET /streams/parking/events?format=ntriples HTTP/1.1\r\nHost: x\r\n\r\n');
    stalled.pause();
    // An evicted connection is reset (the kernel frees its buffers at once): its client reads ECONNRESET.
    let stalledError: string | undefined;
    stalled.on('error', (error: NodeJS.ErrnoException) => (stalledError = error.code));
    const stalledClosed = new Promise<void>((resolve) => stalled.on('close', () => resolve()));
    await running!.untilSubscribers(2);
    // ~100 kB elements: the kernel's socket buffers fill first, then the process-side queue.
    const big = sampleObservations(running.hub.definition.iri, Array.from({ length: 100 }, (_, index) => index));
    let pushed = 0;
    while (running.subscribers() === 2 && pushed < 200) {
      await running.push(big);
      pushed++;
    }
    expect(running.subscribers()).toBe(1);
    stalled.resume();
    await stalledClosed;
    expect([undefined, 'ECONNRESET']).toContain(stalledError);
    await running.push();
    await reader.waitForEvents(pushed + 1);
    expect(elementIds(reader.events)).toEqual(range(1, pushed + 1));
    const metrics = await (await fetch(`${running.url}/metrics`)).text();
    expect(metrics).toMatch(/rdf_stream_subscribers_evicted_total\{stream="parking",reason="queue"\} 1/);
    reader.close();
  });

  /** A raw client that sends its request and then never reads a byte (until `resume()`). */
  function neverReading(path: string, headers = '') {
    const socket = connect(Number(new URL(running!.url).port), '127.0.0.1');
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n${headers}\r\n`);
    socket.pause();
    // An evicted connection is reset: its client reads ECONNRESET (or the close, if it read all first).
    socket.on('error', (error: NodeJS.ErrnoException) => expect(error.code).toBe('ECONNRESET'));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    // A paused socket never sees the end of its stream: read what is left, then the close.
    return { closed: () => (socket.resume(), closed) };
  }

  const evictedMetric = async () => {
    const metrics = await (await fetch(`${running!.url}/metrics`)).text();
    return /rdf_stream_subscribers_evicted_total\{stream="parking",reason="(\w+)"\} 1/.exec(metrics)?.[1];
  };

  it('a live subscriber that stops reading is evicted subscriberStallTimeoutMs after its socket buffers fill, whatever the stream rate', async () => {
    // A queue limit it never reaches: only the stall timer can cut it.
    running = await startTestPublisher({ flags: ['--max-subscriber-queue-bytes', String(1 << 30), '--subscriber-stall-timeout-ms', '300'] });
    const stalled = neverReading('/streams/parking/events?format=ntriples');
    await running!.untilSubscribers(1);
    const big = sampleObservations(running.hub.definition.iri, Array.from({ length: 100 }, (_, index) => index));
    // Pushes until the kernel's buffers are full and the timer has run out (a few MB at most).
    for (let pushed = 0; running.subscribers() === 1 && pushed < 2_000; pushed++) await running.push(big);
    expect(running.subscribers()).toBe(0);
    expect(await evictedMetric()).toBe('stall');
    await stalled.closed();
  });

  it('a subscriber that stops reading while it catches up over the history is evicted too (it never goes live)', async () => {
    // A queue limit it never reaches, as above: a catch-up batch (64 elements, some 6 MB) would
    // otherwise pass the default 512 KiB before the stall timer ran out, and which cut came first
    // would depend on the machine's load. Only the stall timer can cut it here.
    running = await startTestPublisher({
      flags: ['--max-subscriber-queue-bytes', String(1 << 30), '--subscriber-stall-timeout-ms', '300', '--log-cache-bytes', '0'],
    });
    const big = sampleObservations(running.hub.definition.iri, Array.from({ length: 100 }, (_, index) => index));
    // Some 10 MB of history in N-Triples: far more than the kernel's buffers hold.
    for (let pushed = 0; pushed < 100; pushed++) await running.push(big);
    const [first] = ids(1);
    const stalled = neverReading('/streams/parking/events?format=ntriples', `Last-Event-ID: ${first}\r\n`);
    await running!.untilSubscribers(1);
    await running!.untilSubscribers(0);
    expect(await evictedMetric()).toBe('stall');
    await stalled.closed();
  });
});
