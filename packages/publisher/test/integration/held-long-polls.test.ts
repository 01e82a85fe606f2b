import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type FormatName, formatNames, mediaTypes } from '@rdf-stream/protocol';
import { readProblem } from '../support/problem.js';
import { OpenedByTests, type RawHttpConnection, type RawResponse, request } from '../support/raw-http.js';
import { HEAD_WRITTEN_ON_THE_SOCKET } from '../../src/http/socket-answers.js';
import { sharedSendProgressMonitor } from '../../src/publish/sse/send-progress-monitor.js';
import { startTestPublisher, type TestPublisher } from '../../src/testing.js';

let running: TestPublisher | undefined;
const opened = new OpenedByTests();
afterEach(async () => {
  opened.close();
  await running?.close();
  running = undefined;
});

const path = '/streams/parking/latest';
/**
 * What reads `/latest`'s requests (`latestRequestParser`): the publisher itself, where Node's
 * HTTP server never sees them (its diagnostics channel neither), or Node's parser.
 */
const parsers = ['direct', 'node'] as const;
type Parser = (typeof parsers)[number];
const parserFlags = (parser: Parser) => ['--latest-request-parser', parser];
const codings = ['identity', 'gzip', 'br'] as const;

const open = (): Promise<RawHttpConnection> => opened.connect(running!.url);

/** The headers that say the time of the answer: they may differ between two answers of one element. */
const timely = new Set(['date', 'cache-control', 'expires']);
const timeless = (response: RawResponse) => response.headerLines.filter(([name]) => !timely.has(name));

/**
 * The requests whose response Node's HTTP server has finished (`http.server.response.finish`,
 * a documented diagnostics channel), by their `Prefer` header, and the head Node took each
 * response to have: the one it wrote, or what a response answered whole on its socket says
 * instead (it wrote none). A long-poll held by its socket alone has its response finished, with
 * nothing written, as soon as it is held.
 */
function finishedResponses(): Array<{ readonly prefer: string; readonly head: string }> {
  const finished: Array<{ readonly prefer: string; readonly head: string }> = [];
  const onFinish = (message: unknown) => {
    const { request: incoming, response } = message as { request: IncomingMessage; response: { _header: string | null } };
    finished.push({ prefer: String(incoming.headers.prefer ?? 'no wait'), head: String(response._header) });
  };
  opened.listen('http.server.response.finish', onFinish);
  return finished;
}

async function publisherWithElement(flags: string[] = []) {
  running = await startTestPublisher({ flags });
  await running.push();
  const etag = (format: FormatName, coding: (typeof codings)[number]) => running!.hub.latest!.etags[format][coding];
  return { running, etag };
}

describe('long-polls held by their socket alone', () => {
  it.each(parsers)('answers every held request, in each format and coding, with the element and the headers an immediate answer has (%s)', async (parser) => {
    const { running, etag } = await publisherWithElement(parserFlags(parser));
    const finished = finishedResponses();
    const held: Array<{ format: FormatName; coding: (typeof codings)[number]; connection: RawHttpConnection }> = [];
    for (const format of formatNames) {
      for (const coding of codings) {
        const connection = await open();
        connection.send(path, { accept: mediaTypes[format], 'accept-encoding': coding, 'if-none-match': etag(format, coding), prefer: 'wait=20' });
        held.push({ format, coding, connection });
      }
    }
    await running.untilWaiting(held.length);
    // Node is done with every held request: nothing of its request or response is kept (read
    // directly, Node never had one).
    expect(finished).toHaveLength(parser === 'node' ? held.length : 0);
    expect(held.every(({ connection }) => connection.pending === 0)).toBe(true);

    await running.push();
    const latest = running.hub.latest!;
    for (const { format, coding, connection } of held) {
      const answer = await connection.read();
      expect(answer.status, `${format} ${coding}`).toBe(200);
      expect(answer.body.equals(latest.bodies[format][coding]), `${format} ${coding}`).toBe(true);
      expect(answer.headers.etag).toBe(latest.etags[format][coding]);
      expect(answer.headers.connection).toBe('keep-alive');
      // The same connection, asked at once: the same headers in the same order (an answer at once
      // is written whole on the socket too; the last describe below compares it with Node's own).
      connection.send(path, { accept: mediaTypes[format], 'accept-encoding': coding });
      const immediate = await connection.read();
      expect(timeless(answer), `${format} ${coding}`).toEqual(timeless(immediate));
      expect(answer.headerLines.map(([name]) => name)).toEqual(immediate.headerLines.map(([name]) => name));
    }
    expect(running.waiting()).toBe(0);
  });

  it('answers held requests that ask alike with one answer, and each that differs by query, coding or method with its own', async () => {
    const { running, etag } = await publisherWithElement();
    const asks = [
      { query: '', coding: 'identity', method: 'GET' },
      { query: '', coding: 'identity', method: 'GET' },
      { query: '?format=jsonld', coding: 'identity', method: 'GET' },
      { query: '', coding: 'identity', method: 'GET' },
      { query: '', coding: 'gzip', method: 'GET' },
      { query: '', coding: 'identity', method: 'HEAD' },
      { query: '', coding: 'identity', method: 'GET' },
    ] as const;
    const held: Array<{ ask: (typeof asks)[number]; connection: RawHttpConnection }> = [];
    for (const ask of asks) {
      const connection = await open();
      // The same Accept and If-None-Match (the element's tags in both formats, which hold in any coding) for all: `?format=` decides over Accept.
      const ifNoneMatch = `${etag('turtle', 'identity')}, ${etag('jsonld', 'identity')}`;
      connection.send(`${path}${ask.query}`, { accept: mediaTypes.turtle, 'accept-encoding': ask.coding, 'if-none-match': ifNoneMatch, prefer: 'wait=20' }, ask.method);
      held.push({ ask, connection });
    }
    await running.untilWaiting(held.length);
    await running.push();
    const latest = running.hub.latest!;
    for (const { ask, connection } of held) {
      const answer = await connection.read(ask.method === 'HEAD');
      const format = ask.query === '' ? 'turtle' : 'jsonld';
      const what = `${ask.method} ${format} ${ask.coding}`;
      expect(answer.status, what).toBe(200);
      expect(answer.headers.etag, what).toBe(latest.etags[format][ask.coding]);
      expect(answer.headers['content-type'], what).toContain(mediaTypes[format]);
      expect(answer.body.equals(ask.method === 'HEAD' ? Buffer.alloc(0) : latest.bodies[format][ask.coding]), what).toBe(true);
    }
  });

  it('answers a held HEAD with the headers and no body, and the connection goes on', async () => {
    const { running, etag } = await publisherWithElement();
    const connection = await open();
    connection.send(path, { 'accept-encoding': 'gzip', 'if-none-match': etag('turtle', 'gzip'), prefer: 'wait=20' }, 'HEAD');
    await running.untilWaiting(1);
    await running.push();
    const answer = await connection.read(true);
    expect(answer.status).toBe(200);
    expect(Number(answer.headers['content-length'])).toBe(running.hub.latest!.bodies.turtle.gzip.length);
    expect(answer.body).toHaveLength(0);
    connection.send(path, { 'accept-encoding': 'identity' });
    const next = await connection.read();
    expect(next.status).toBe(200);
    expect(next.body.equals(running.hub.latest!.bodies.turtle.identity)).toBe(true);
  });

  it.each(parsers)('hands the connection back to the HTTP server: held again, answered again, then any route on it (%s)', async (parser) => {
    const { running, etag } = await publisherWithElement(parserFlags(parser));
    const finished = finishedResponses();
    const connection = await open();
    for (let round = 0; round < 3; round++) {
      connection.send(path, { 'accept-encoding': 'identity', 'if-none-match': running.hub.latest!.etags.turtle.identity, prefer: 'wait=20' });
      await running.untilWaiting(1);
      await running.push();
      const answer = await connection.read();
      expect(answer.status).toBe(200);
      expect(answer.headers.etag).toBe(running.hub.latest!.etags.turtle.identity);
    }
    expect(finished).toHaveLength(parser === 'node' ? 3 : 0);
    expect(etag('turtle', 'identity')).toMatch(/-4-turtle"$/);
    // Requests the fast path leaves to Fastify, on the same connection.
    connection.send('/health');
    expect((await connection.read()).status).toBe(200);
    connection.send(`${path}?format=xml`);
    const refused = await connection.read();
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body.toString('utf8')).code).toBe('PUB_ERR_UNKNOWN_FORMAT');
    expect(connection.ended).toBe(false);
  });

  it('watches what a connection\'s client acknowledges once, from its first held request until it closes, not once per hold', async () => {
    // A check interval of this test's own, so that its monitor watches this publisher's connections alone.
    const { running } = await publisherWithElement(['--subscriber-progress-check-ms', '777']);
    const monitor = sharedSendProgressMonitor(777);
    const connection = await open();
    for (let round = 0; round < 3; round++) {
      connection.send(path, { 'accept-encoding': 'identity', 'if-none-match': running.hub.latest!.etags.turtle.identity, prefer: 'wait=20' });
      await running.untilWaiting(1);
      expect(monitor.size).toBe(1);
      await running.push();
      expect((await connection.read()).status).toBe(200);
      // Answered, and idle until its next request: still watched, so that the monitor knows it idle.
      expect(monitor.size).toBe(1);
    }
    connection.close();
    await vi.waitUntil(() => monitor.size === 0, { timeout: 10_000, interval: 10 });
  });

  it('leaves a connection out of the checks once its client has acknowledged what it was sent, until its next answer, however it is answered', async () => {
    // A monitor of this test's own, whose timer never fires here: the test runs each check.
    const { running } = await publisherWithElement(['--subscriber-progress-check-ms', '59999']);
    const monitor = sharedSendProgressMonitor(59_999);
    const connection = await open();
    const quiet = () =>
      vi.waitUntil(
        async () => {
          await monitor.check();
          return monitor.unsettled === 0;
        },
        { timeout: 10_000, interval: 20 },
      );
    connection.send(path, { 'accept-encoding': 'identity', 'if-none-match': running.hub.latest!.etags.turtle.identity, prefer: 'wait=20' });
    await running.untilWaiting(1);
    expect([monitor.size, monitor.unsettled]).toEqual([1, 1]);
    // Held, nothing outstanding: not visited again while it waits.
    await quiet();
    await running.push();
    expect((await connection.read()).status).toBe(200);
    // The held answer's write brings it back into the checks,
    expect(monitor.unsettled).toBe(1);
    await quiet();
    // and so does an answer at once by the fast path,
    connection.send(path, { 'accept-encoding': 'identity' });
    expect((await connection.read()).status).toBe(200);
    expect(monitor.unsettled).toBe(1);
    await quiet();
    // and one by a Fastify route that answers after the request was handed over (it awaits every metric's collection).
    connection.send('/metrics');
    expect((await connection.read()).status).toBe(200);
    expect(monitor.unsettled).toBe(1);
    await quiet();
    expect(monitor.size).toBe(1);
  });

  it('reads each connection again once a release of several batches has answered them all', async () => {
    const { running, etag } = await publisherWithElement(['--broadcast-batch-size', '1']);
    const held = [await open(), await open(), await open()];
    for (const connection of held) connection.send(path, { 'accept-encoding': 'identity', 'if-none-match': etag('turtle', 'identity'), prefer: 'wait=20' });
    await running.untilWaiting(3);
    await running.push();
    for (const connection of held) {
      expect((await connection.read()).status).toBe(200);
      connection.send(path, { 'accept-encoding': 'identity' });
    }
    for (const connection of held) expect((await connection.read()).headers.etag).toBe(etag('turtle', 'identity'));
  });

  it('answers 304, with validators and freshness, when the wait ends without an element; the connection goes on', async () => {
    const { running, etag } = await publisherWithElement();
    const connection = await open();
    connection.send(path, { 'accept-encoding': 'br', 'if-none-match': etag('turtle', 'br'), prefer: 'wait=1' });
    await running.untilWaiting(1);
    const answer = await connection.read();
    expect(answer.status).toBe(304);
    expect(answer.headers.etag).toBe(etag('turtle', 'br'));
    expect(answer.headers['cache-control']).toMatch(/^public, max-age=\d+/);
    expect(answer.headers['content-length']).toBeUndefined();
    expect(answer.body).toHaveLength(0);
    expect(running.waiting()).toBe(0);
    connection.send(path, { 'accept-encoding': 'br' });
    expect((await connection.read()).status).toBe(200);
  });

  it('keeps a held connection past the keep-alive timeout, which is for idle connections', async () => {
    const { running, etag } = await publisherWithElement(['--keep-alive-timeout-ms', '1000']);
    const connection = await open();
    connection.send(path, { 'accept-encoding': 'identity', 'if-none-match': etag('turtle', 'identity'), prefer: 'wait=3' });
    await running.untilWaiting(1);
    const answer = await connection.read();
    expect(answer.status).toBe(304);
    expect(answer.headers['keep-alive']).toBe('timeout=1');
    // Idle now: the keep-alive timeout ends it.
    await connection.closed;
  });

  it('holds at most maxLongPollWaiters; the next gets 503 problem+json; those held are answered', async () => {
    const { running, etag } = await publisherWithElement(['--max-long-poll-waiters', '2']);
    const headers = { 'accept-encoding': 'identity', 'if-none-match': etag('turtle', 'identity'), prefer: 'wait=20' };
    const held = [await open(), await open()];
    for (const connection of held) connection.send(path, headers);
    await running.untilWaiting(2);
    const refused = await fetch(`${running.url}${path}`, { headers });
    expect(refused.status).toBe(503);
    expect((await readProblem(refused)).code).toBe('PUB_ERR_LONG_POLL_LIMIT');
    await running.push();
    expect((await Promise.all(held.map((connection) => connection.read()))).map((answer) => answer.status)).toEqual([200, 200]);
  });

  it('forgets a held request whose client went away, and answers the others', async () => {
    const { running, etag } = await publisherWithElement();
    const headers = { 'accept-encoding': 'identity', 'if-none-match': etag('turtle', 'identity'), prefer: 'wait=20' };
    const gone = await open();
    const staying = await open();
    gone.send(path, headers);
    staying.send(path, headers);
    await running.untilWaiting(2);
    gone.close();
    await running.untilWaiting(1);
    await running.push();
    expect((await staying.read()).status).toBe(200);
    expect(running.waiting()).toBe(0);
  });

  it('answers a held request first when another is pipelined behind it, so that answers keep their order', async () => {
    const { running, etag } = await publisherWithElement();
    const connection = await open();
    connection.socket.write(
      request(path, { 'accept-encoding': 'identity', 'if-none-match': etag('turtle', 'identity'), prefer: 'wait=20' }) +
        request(path, { 'accept-encoding': 'gzip' }) +
        request(path, { 'accept-encoding': 'identity', 'if-none-match': etag('turtle', 'identity'), prefer: 'wait=20' }),
    );
    const first = await connection.read();
    expect(first.status).toBe(304);
    const second = await connection.read();
    expect(second.status).toBe(200);
    expect(second.headers['content-encoding']).toBe('gzip');
    await running.untilWaiting(1);
    await running.push();
    const third = await connection.read();
    expect(third.status).toBe(200);
    expect(third.headers.etag).toBe(running.hub.latest!.etags.turtle.identity);
  });

  it('holds a request whose connection closes after it with its response, and answers it Connection: close', async () => {
    const { running, etag } = await publisherWithElement();
    const finished = finishedResponses();
    const connection = await open();
    connection.send(path, { 'accept-encoding': 'identity', 'if-none-match': etag('turtle', 'identity'), prefer: 'wait=20', connection: 'close' });
    await running.untilWaiting(1);
    expect(finished).toEqual([]);
    await running.push();
    const answer = await connection.read();
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).toBe('close');
    await connection.closed;
  });

  it('answers held requests at shutdown with Connection: close, and ends their connections', async () => {
    const { running, etag } = await publisherWithElement();
    const connection = await open();
    connection.send(path, { 'accept-encoding': 'identity', 'if-none-match': etag('turtle', 'identity'), prefer: 'wait=30' });
    await running.untilWaiting(1);
    expect(await running.publisher.shutdown()).toBe(true);
    const answer = await connection.read();
    expect(answer.status).toBe(304);
    expect(answer.headers.connection).toBe('close');
    await connection.closed;
  });
});

/** Headers that may differ between two answers of one element: the time, and the connection's own. */
const varying = new Set([...timely, 'connection', 'keep-alive']);
const comparable = (response: RawResponse) => response.headerLines.filter(([name]) => !varying.has(name));

describe('/latest answered at once, whole on its socket', () => {
  it.each(parsers)("has the status, the headers in their order and the body of Node's own response: 200, 304 and HEAD, in each format and coding (%s)", async (parser) => {
    running = await startTestPublisher({ flags: ['--keep-alive-timeout-ms', '7000', ...parserFlags(parser)] });
    await running.push();
    const latest = running.hub.latest!;
    const finished = finishedResponses();
    const asks: Array<{ format: FormatName; coding: (typeof codings)[number]; method: 'GET' | 'HEAD'; ifNoneMatch: boolean }> = [];
    for (const format of formatNames) {
      for (const coding of codings) {
        asks.push({ format, coding, method: 'GET', ifNoneMatch: false }, { format, coding, method: 'GET', ifNoneMatch: true }, { format, coding, method: 'HEAD', ifNoneMatch: false });
      }
    }
    const kept = await open();
    for (const ask of asks) {
      const what = `${ask.method} ${ask.format} ${ask.coding}${ask.ifNoneMatch ? ' If-None-Match' : ''}`;
      const headers = { accept: mediaTypes[ask.format], 'accept-encoding': ask.coding, ...(ask.ifNoneMatch ? { 'if-none-match': latest.etags[ask.format][ask.coding] } : {}) };
      kept.send(path, headers, ask.method);
      const answer = await kept.read(ask.method === 'HEAD');
      // The same asked with Connection: close, which Node answers itself (writeHead and end).
      const closing = await open();
      closing.send(path, { ...headers, connection: 'close' }, ask.method);
      const reference = await closing.read(ask.method === 'HEAD');
      expect(answer.status, what).toBe(ask.ifNoneMatch ? 304 : 200);
      expect(comparable(answer), what).toEqual(comparable(reference));
      // In the same order, Date and Connection included; Keep-Alive only where the connection stays.
      const names = (response: RawResponse) => response.headerLines.map(([name]) => name).filter((name) => name !== 'keep-alive');
      expect(names(answer), what).toEqual(names(reference));
      expect(answer.body.equals(reference.body), what).toBe(true);
      if (ask.method === 'GET' && !ask.ifNoneMatch) expect(answer.body.equals(latest.bodies[ask.format][ask.coding]), what).toBe(true);
      expect([answer.headers.connection, answer.headers['keep-alive']], what).toEqual(['keep-alive', 'timeout=7']);
      expect(reference.headers.connection, what).toBe('close');
      await closing.closed;
    }
    // Every kept-alive answer was written whole on the socket (read directly, Node never saw
    // the request), every closing one by Node.
    expect(finished.filter(({ head }) => head === HEAD_WRITTEN_ON_THE_SOCKET)).toHaveLength(parser === 'node' ? asks.length : 0);
    expect(finished.filter(({ head }) => head.startsWith('HTTP/1.1 '))).toHaveLength(asks.length);
  });

  it.each(parsers)('answers pipelined requests in order, those behind the first by Node when their turn comes, and the connection goes on to any route (%s)', async (parser) => {
    running = await startTestPublisher({ flags: parserFlags(parser) });
    await running.push();
    const latest = running.hub.latest!;
    const finished = finishedResponses();
    const connection = await open();
    connection.socket.write(
      request(path, { 'accept-encoding': 'identity' }) +
        request(path, { 'accept-encoding': 'gzip' }) +
        request(path, { 'accept-encoding': 'br', 'if-none-match': latest.etags.turtle.br }) +
        request(path, { 'accept-encoding': 'identity' }, 'HEAD'),
    );
    const first = await connection.read();
    const second = await connection.read();
    const third = await connection.read();
    const fourth = await connection.read(true);
    expect([first.status, second.status, third.status, fourth.status]).toEqual([200, 200, 304, 200]);
    expect(first.body.equals(latest.bodies.turtle.identity)).toBe(true);
    expect(second.body.equals(latest.bodies.turtle.gzip)).toBe(true);
    expect(third.headers.etag).toBe(latest.etags.turtle.br);
    expect(fourth.body).toHaveLength(0);
    // Then a route of Fastify's on the same connection.
    connection.send('/streams/parking', { accept: mediaTypes.turtle });
    const descriptor = await connection.read();
    expect(descriptor.status).toBe(200);
    expect(descriptor.headers['content-type']).toContain('text/turtle');
    // And /latest again, answered on the socket again.
    connection.send(path);
    expect((await connection.read()).status).toBe(200);
    // Node's responses, in order. Parsed by Node: the first pipelined answered on the socket, those
    // behind it by Node (a pipelined response whose turn has not come), the descriptor, /latest on
    // the socket. Read directly: the four pipelined never reach Node; the connection goes to Node
    // with the descriptor's request and stays with it, whose path answers /latest on the socket.
    const written = finished.map(({ head }) => (head === HEAD_WRITTEN_ON_THE_SOCKET ? 'socket' : 'node'));
    expect(written).toEqual(parser === 'node' ? ['socket', 'node', 'node', 'node', 'node', 'socket'] : ['node', 'socket']);
    expect(connection.ended).toBe(false);
  });
});
