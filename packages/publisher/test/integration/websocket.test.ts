import { once } from 'node:events';
import { connect } from 'node:net';
import { WebSocket as UndiciWebSocket } from 'undici';
import { WebSocket } from 'ws';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatNames } from '@rdf-stream/protocol';
import { elementData } from '../../src/render/sse-frame.js';
import { sharedSendProgressMonitor } from '../../src/publish/sse/send-progress-monitor.js';
import { openWs, parseWsMessage, UpgradeRefused, wsElementIds } from '../support/ws-client.js';
import { elementIds, openSse, sampleObservations, startTestPublisher, type TestPublisher } from '../../src/testing.js';

/** For state no event announces: checked every 10 ms, with a deadline for a broken server, not a measure of speed. */
const patience = { timeout: 30_000, interval: 10 };

let running: TestPublisher | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const wsUrl = (query = '') => `${running!.url.replace(/^http/, 'ws')}/streams/parking/ws${query}`;
/** Ids of elements of the running publisher's log: `{epoch}-{seq}`. */
const ids = (...seqs: number[]) => seqs.map((seq) => `${running!.hub.log.epoch}-${seq}`);
const range = (from: number, count: number) => ids(...Array.from({ length: count }, (_, index) => from + index));
const wsSubscribers = () => running!.subscribers({ transport: 'websocket' });

async function refusal(url: string, headers: Record<string, string> = {}): Promise<UpgradeRefused> {
  const error = await openWs(url, { headers }).then(
    () => {
      throw new Error('the upgrade was accepted');
    },
    (refused: unknown) => refused,
  );
  expect(error).toBeInstanceOf(UpgradeRefused);
  return error as UpgradeRefused;
}

describe('GET /streams/{id}/ws with a real ws client', () => {
  it('sends each element as one text message, in order, JSON-LD by default', async () => {
    running = await startTestPublisher();
    const client = await openWs(wsUrl());
    await running!.untilSubscribers(1, { transport: 'websocket' });
    for (let index = 0; index < 3; index++) await running.push();
    const messages = await client.waitForMessages(3);
    expect(wsElementIds(messages)).toEqual(range(1, 3));
    for (const message of messages) {
      expect(message.type).toBe('element');
      expect(JSON.parse(message.body)['@id']).toBe(`${running.hub.definition.iri}/elements/${message.argument}`);
    }
    client.close();
  });

  it.each(formatNames)("carries exactly the SSE data payload of the same element in %s", async (format) => {
    running = await startTestPublisher();
    const sse = await openSse(`${running.url}/streams/parking/events?format=${format}`);
    const client = await openWs(wsUrl(`?format=${format}`));
    await running!.untilSubscribers(2);
    await running.push(sampleObservations(running.hub.definition.iri, [1, 2, 3]));
    const [message] = await client.waitForMessages(1);
    const [event] = await sse.waitForEvents(1);
    expect(message!.argument).toBe(event!.id);
    expect(message!.body).toBe(event!.data);
    expect(message!.text).toBe(`element ${event!.id}\n${event!.data}`);
    if (format !== 'jsonld') expect(message!.body.split('\n').length).toBeGreaterThan(1);
    sse.close();
    client.close();
  });

  it('resumes after a cut with ?lastEventId=: every element after it once, in order, then live ones', async () => {
    running = await startTestPublisher();
    const first = await openWs(wsUrl('?format=nquads'));
    await running!.untilSubscribers(1, { transport: 'websocket' });
    for (let index = 0; index < 3; index++) await running.push();
    const seen = await first.waitForMessages(3);
    first.socket.terminate(); // a cut, not a goodbye
    await first.closed;
    await running!.untilSubscribers(0, { transport: 'websocket' });
    for (let index = 0; index < 2; index++) await running.push();
    const resumed = await openWs(wsUrl(`?format=nquads&lastEventId=${seen.at(-1)!.argument}`));
    // Live elements published while it catches up: the seam must have no gap and no duplicate.
    const pushing = (async () => {
      for (let index = 0; index < 20; index++) await running!.push();
    })();
    await pushing;
    const messages = await resumed.waitForMessages(22);
    expect(wsElementIds(messages)).toEqual(range(4, 22));
    expect(messages.every((message) => message.type === 'element')).toBe(true);
    resumed.close();
  });

  it.each([
    ['an id of another life of the log', 'epoch', (epoch: string) => `${epoch.startsWith('a') ? 'b' : 'a'}${epoch.slice(1)}-3`],
    ['an id newer than the log', 'unknown', (epoch: string) => `${epoch}-99`],
  ])('says so with a gap message for %s, then replays all that is retained', async (_what, reason, requested) => {
    running = await startTestPublisher();
    for (let index = 0; index < 4; index++) await running.push();
    const requestedId = requested(running.hub.log.epoch);
    const client = await openWs(wsUrl(`?lastEventId=${requestedId}`));
    const messages = await client.waitForMessages(5);
    expect(messages[0]!.type).toBe('gap');
    expect(messages[0]!.argument).toBeUndefined();
    expect(JSON.parse(messages[0]!.body)).toEqual({ requestedId, oldestRetained: ids(1)[0], reason });
    expect(wsElementIds(messages)).toEqual(range(1, 4));
    client.close();
  });

  it('says expired when the id is older than retention, and goes on from the oldest retained element', async () => {
    running = await startTestPublisher({ flags: ['--retained-elements', '2', '--page-elements', '2'] });
    for (let index = 0; index < 7; index++) await running.push();
    const oldest = running.hub.log.oldestSeq!;
    expect(oldest).toBeGreaterThan(2);
    const [requestedId] = ids(1);
    const client = await openWs(wsUrl(`?lastEventId=${requestedId}`));
    const messages = await client.waitForMessages(1 + 7 - oldest + 1);
    expect(JSON.parse(messages[0]!.body)).toEqual({ requestedId, oldestRetained: ids(oldest)[0], reason: 'expired' });
    expect(wsElementIds(messages)).toEqual(range(oldest, 7 - oldest + 1));
    client.close();
  });

  it('refuses before the upgrade with problem+json: a malformed id, an unknown stream or format, a plain GET', async () => {
    running = await startTestPublisher();
    const malformed = await refusal(wsUrl('?lastEventId=not-an-id!'));
    expect(malformed.status).toBe(400);
    expect(malformed.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(malformed.problem.code).toBe('PUB_ERR_INVALID_EVENT_ID');
    expect((await refusal(wsUrl('?format=rdfxml'))).problem.code).toBe('PUB_ERR_UNKNOWN_FORMAT');
    const unknown = await refusal(`${running.url.replace(/^http/, 'ws')}/streams/nowhere/ws`);
    expect([unknown.status, unknown.problem.code]).toEqual([404, 'PUB_ERR_STREAM_NOT_FOUND']);
    const plain = await fetch(`${running.url}/streams/parking/ws`);
    expect(plain.status).toBe(426);
    expect(plain.headers.get('upgrade')).toBe('websocket');
    expect(((await plain.json()) as { code: string }).code).toBe('PUB_ERR_UPGRADE_REQUIRED');
    expect(wsSubscribers()).toBe(0);
  });

  it('needs no subprotocol, and echoes the first one a client offers (a browser fails a handshake that selects none)', async () => {
    running = await startTestPublisher();
    const client = new WebSocket(wsUrl(), ['rdf-stream', 'other']);
    await once(client, 'open');
    expect(client.protocol).toBe('rdf-stream');
    await running!.untilSubscribers(1, { transport: 'websocket' });
    client.close();
  });

  it('accepts a browser page of any origin, as every read (the CORS policy opens reads to all)', async () => {
    running = await startTestPublisher({ flags: ['--cors-ingest-origins', 'https://ops.example'] });
    const client = await openWs(wsUrl(), { headers: { origin: 'https://elsewhere.example' } });
    await running!.untilSubscribers(1, { transport: 'websocket' });
    client.close();
  });

  it("ws' own frames (pongs to the client's pings) never land inside a shared frame", async () => {
    running = await startTestPublisher();
    const client = await openWs(wsUrl('?format=nquads'), { perMessageDeflate: false });
    let pongs = 0;
    client.socket.on('pong', () => pongs++);
    await running!.untilSubscribers(1, { transport: 'websocket' });
    const big = sampleObservations(running.hub.definition.iri, Array.from({ length: 100 }, (_, index) => index));
    for (let index = 0; index < 20; index++) {
      for (let ping = 0; ping < 10; ping++) client.socket.ping();
      await running.push(big);
    }
    const messages = await client.waitForMessages(20);
    expect(wsElementIds(messages)).toEqual(range(1, 20));
    await vi.waitUntil(() => pongs === 200, patience);
    client.close();
    expect((await client.closed).code).toBe(1005);
  });

  it("a pong ws writes on its own to a quiet WebSocket brings it back into the checks of what its client acknowledged", async () => {
    // A check interval no test outlasts: the checks below are the test's own.
    running = await startTestPublisher({ flags: ['--subscriber-progress-check-ms', '60000'] });
    const monitor = sharedSendProgressMonitor(60_000, running.config.subscriberSendQueueReader);
    const client = await openWs(wsUrl());
    await running!.untilSubscribers(1, { transport: 'websocket' });
    await running.push();
    await client.waitForMessages(1);
    // Once its client has acknowledged the element, a check finds it idle and leaves it out.
    await vi.waitUntil(async () => {
      await monitor.check();
      return monitor.unsettled === 0;
    }, patience);
    expect(monitor.size).toBe(1);
    client.socket.ping();
    await once(client.socket, 'pong');
    expect(monitor.unsettled).toBe(1);
    client.close();
  });

  it.each([
    ['text', 'hello'],
    ['binary', Buffer.from([1, 2, 3])],
  ])('closes 1008 a client that sends a %s message', async (_kind, data) => {
    running = await startTestPublisher();
    const client = await openWs(wsUrl());
    await running!.untilSubscribers(1, { transport: 'websocket' });
    client.socket.send(data);
    expect(await client.closed).toEqual({ code: 1008, reason: 'PUB_ERR_WS_CLIENT_MESSAGE' });
    await running!.untilSubscribers(0, { transport: 'websocket' });
  });

  it('closes 1009 a client frame over wsMaxPayloadBytes, and takes one at the limit as a message (1008)', async () => {
    running = await startTestPublisher({ flags: ['--ws-max-payload-bytes', '200'] });
    const over = await openWs(wsUrl(), { perMessageDeflate: false });
    over.socket.send('x'.repeat(201));
    expect((await over.closed).code).toBe(1009);
    const at = await openWs(wsUrl(), { perMessageDeflate: false });
    at.socket.send('x'.repeat(200));
    expect((await at.closed).code).toBe(1008);
  });

  it('a Node 22+/browser WebSocket (undici) and a ws client without permessage-deflate receive the same messages', async () => {
    running = await startTestPublisher();
    const plain = await openWs(wsUrl('?format=turtle'), { perMessageDeflate: false });
    // Node 22+'s global WebSocket (WHATWG, as in browsers); on Node 20 undici's, which it is.
    const BrowserWebSocket = (globalThis as { WebSocket?: typeof UndiciWebSocket }).WebSocket ?? UndiciWebSocket;
    const browserLike = new BrowserWebSocket(wsUrl('?format=turtle'));
    const received: string[] = [];
    browserLike.addEventListener('message', (event) => received.push(event.data as string));
    await once(browserLike as unknown as EventTarget, 'open');
    await running!.untilSubscribers(2, { transport: 'websocket' });
    expect(plain.extensions).toBe('');
    await running.push();
    await running.push();
    const messages = await plain.waitForMessages(2);
    await vi.waitUntil(() => received.length === 2, patience);
    expect(received.map((text) => parseWsMessage(text).text)).toEqual(messages.map((message) => message.text));
    expect(wsElementIds(messages)).toEqual(range(1, 2));
    browserLike.close();
    plain.close();
  });
});

describe('permessage-deflate, once per element for every socket', () => {
  it('negotiates server_no_context_takeover, and every client decodes the same compressed frames to the uncompressed payload', async () => {
    running = await startTestPublisher();
    const compressed = [await openWs(wsUrl('?format=trig')), await openWs(wsUrl('?format=trig'))];
    const plain = await openWs(wsUrl('?format=trig'), { perMessageDeflate: false });
    await running!.untilSubscribers(3, { transport: 'websocket' });
    for (const client of compressed) expect(client.extensions).toMatch(/^permessage-deflate;.*server_no_context_takeover/);
    const values = Array.from({ length: 60 }, (_, index) => index);
    for (let index = 0; index < 3; index++) await running.push(sampleObservations(running.hub.definition.iri, values));
    const decoded = await Promise.all([...compressed, plain].map((client) => client.waitForMessages(3)));
    for (const messages of decoded) expect(messages.map((message) => message.text)).toEqual(decoded[2]!.map((message) => message.text));
    // The payload is the element's SSE data.
    const logged = (await running.hub.log.get(2))!;
    expect(decoded[0]![1]!.body).toBe(elementData(logged, 'trig'));
    // On the wire: the same compressed bytes (RSV1 set) to both, far fewer than uncompressed.
    const [first, second] = compressed.map((client) => Buffer.concat(client.wire));
    expect(first!.equals(second!)).toBe(true);
    expect(first![0]).toBe(0x80 | 0x40 | 0x1);
    const plainWire = Buffer.concat(plain.wire);
    expect(plainWire[0]).toBe(0x80 | 0x1);
    expect(first!.length).toBeLessThan(plainWire.length / 3);
    for (const client of [...compressed, plain]) client.close();
  });

  it('sends uncompressed frames to a client that asked for a smaller server window', async () => {
    running = await startTestPublisher();
    const small = await openWs(wsUrl(), { perMessageDeflate: { serverMaxWindowBits: 10 } });
    await running!.untilSubscribers(1, { transport: 'websocket' });
    expect(small.extensions).toMatch(/^permessage-deflate;.*server_max_window_bits=10/);
    await running.push();
    const [message] = await small.waitForMessages(1);
    expect(message!.type).toBe('element');
    expect(Buffer.concat(small.wire)[0]).toBe(0x80 | 0x1);
    small.close();
  });
});

describe('limits and protections', () => {
  /** A raw client that completes the handshake and then never reads a byte (until `closed()`). */
  async function neverReading(path: string) {
    const socket = connect(Number(new URL(running!.url).port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
    );
    socket.pause();
    // A connection cut for stalling is reset: its client reads ECONNRESET.
    socket.on('error', (error: NodeJS.ErrnoException) => expect(error.code).toBe('ECONNRESET'));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    return { closed: () => (socket.resume(), closed) };
  }

  const evicted = async (reason: string) => {
    const metrics = await (await fetch(`${running!.url}/metrics`)).text();
    return new RegExp(`rdf_stream_subscribers_evicted_total\\{stream="parking",reason="${reason}"\\} 1`).test(metrics);
  };

  it('evicts a socket that never reads at maxSubscriberQueueBytes, cut at wsCloseTimeoutMs as it never answers the close, while others keep receiving', async () => {
    running = await startTestPublisher({ flags: ['--max-subscriber-queue-bytes', String(256 * 1024), '--ws-close-timeout-ms', '500'] });
    const reader = await openWs(wsUrl('?format=ntriples'), { perMessageDeflate: false });
    const stalled = await neverReading('/streams/parking/ws?format=ntriples');
    await running!.untilSubscribers(2, { transport: 'websocket' });
    const big = sampleObservations(running.hub.definition.iri, Array.from({ length: 100 }, (_, index) => index));
    let pushed = 0;
    while (wsSubscribers() === 2 && pushed < 200) {
      await running.push(big);
      pushed++;
    }
    expect(wsSubscribers()).toBe(1);
    expect(await evicted('queue')).toBe(true);
    // Its close frame sits behind what it never read: the server cuts it at wsCloseTimeoutMs
    // (ws' default would hold it 30 s, past this test's timeout).
    await stalled.closed();
    await running.push();
    const messages = await reader.waitForMessages(pushed + 1);
    expect(wsElementIds(messages)).toEqual(range(1, pushed + 1));
    reader.close();
  });

  it('resets a reader evicted for stalling (no close frame could reach it), which it sees as 1006 once it reads again', async () => {
    running = await startTestPublisher({
      flags: ['--max-subscriber-queue-bytes', String(1 << 30), '--subscriber-stall-timeout-ms', '300', '--ws-close-timeout-ms', '60000'],
    });
    const client = await openWs(wsUrl('?format=ntriples'), { perMessageDeflate: false });
    client.socket.pause();
    await running!.untilSubscribers(1, { transport: 'websocket' });
    const big = sampleObservations(running.hub.definition.iri, Array.from({ length: 100 }, (_, index) => index));
    while (wsSubscribers() === 1) await running.push(big);
    expect(await evicted('stall')).toBe(true);
    client.socket.resume();
    expect(await client.closed).toEqual({ code: 1006, reason: '' });
  });

  it('pings every heartbeatMs, and cuts a client that answers no ping within wsPongTimeoutMs', async () => {
    running = await startTestPublisher({ flags: ['--heartbeat-ms', '1000', '--ws-pong-timeout-ms', '1000'] });
    const answering = await openWs(wsUrl());
    const silent = await openWs(wsUrl(), { autoPong: false });
    let pings = 0;
    answering.socket.on('ping', () => pings++);
    await running!.untilSubscribers(2, { transport: 'websocket' });
    expect((await silent.closed).code).toBe(1006);
    expect(pings).toBeGreaterThanOrEqual(1);
    expect(await evicted('pong')).toBe(true);
    expect(wsSubscribers()).toBe(1);
    answering.close();
  });

  /** A shed socket: closed 1013 `{"code":"PUB_ERR_OVERLOADED","retryMs":N}` with N in [minMs, maxMs]. */
  async function expectShed(shed: Awaited<ReturnType<typeof openWs>>, minMs: number, maxMs: number) {
    const { code, reason } = await shed.closed;
    expect(code).toBe(1013);
    const body = JSON.parse(reason) as { code: string; retryMs: number };
    expect(body.code).toBe('PUB_ERR_OVERLOADED');
    expect(body.retryMs).toBeGreaterThanOrEqual(minMs);
    expect(body.retryMs).toBeLessThanOrEqual(maxMs);
  }

  it('sheds with close 1013 and a jittered retryMs when maxSubscribers (SSE and WebSocket together) are connected', async () => {
    running = await startTestPublisher({ flags: ['--max-subscribers', '2', '--sse-retry-ms', '1000'] });
    const sse = await openSse(`${running.url}/streams/parking/events`);
    const ws = await openWs(wsUrl());
    await running!.untilSubscribers(2);
    await expectShed(await openWs(wsUrl()), 1000, 2000);
    expect(running.subscribers()).toBe(2);
    sse.close();
    ws.close();
  });

  it('sheds under load with close 1013 and a retryMs jittered up to pressureRetryAfterSeconds', async () => {
    running = await startTestPublisher({ flags: ['--pressure-retry-after-seconds', '5', '--sse-retry-ms', '1000'], healthCheck: async () => false });
    await expectShed(await openWs(wsUrl()), 1000, 5000);
    expect(wsSubscribers()).toBe(0);
  });

  it('drains on shutdown with close 1012 and {"retryMs":N}, within the shutdown budget', async () => {
    running = await startTestPublisher({ flags: ['--sse-retry-ms', '1000', '--shutdown-retry-jitter-ms', '3000'] });
    const clients = [await openWs(wsUrl()), await openWs(wsUrl(), { perMessageDeflate: false })];
    const sse = await openSse(`${running.url}/streams/parking/events`);
    await running!.untilSubscribers(3);
    await running.push();
    expect(await running.publisher.shutdown()).toBe(true);
    running = undefined;
    for (const client of clients) {
      const { code, reason } = await client.closed;
      expect(code).toBe(1012);
      const { retryMs } = JSON.parse(reason) as { retryMs: number };
      expect(retryMs).toBeGreaterThanOrEqual(1000);
      expect(retryMs).toBeLessThanOrEqual(4000);
      expect(wsElementIds(client.messages)).toHaveLength(1);
    }
    await sse.ended;
    expect(elementIds(sse.events)).toHaveLength(1);
  });
});
