import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { DIRECT_HEAD_MAX_BYTES } from '../../src/http/direct-latest-requests.js';
import { OpenedByTests, type RawHttpConnection, request } from '../support/raw-http.js';
import { startTestPublisher, type TestPublisher } from '../../src/testing.js';

let running: TestPublisher | undefined;
const opened = new OpenedByTests();
afterEach(async () => {
  opened.close();
  await running?.close();
  running = undefined;
});

const path = '/streams/parking/latest';
const direct = ['--latest-request-parser', 'direct'];

const open = (): Promise<RawHttpConnection> => opened.connect(running!.url);

/** The paths of the requests Node's HTTP server parsed (`http.server.request.start`, a documented diagnostics channel). */
function requestsNodeParsed(): string[] {
  const parsed: string[] = [];
  const onStart = (message: unknown) => parsed.push(String((message as { request: IncomingMessage }).request.url));
  opened.listen('http.server.request.start', onStart);
  return parsed;
}

describe('/latest read by the publisher itself (latestRequestParser: direct)', () => {
  it('reads polls and long-polls without Node, and hands the connection to Node with the first request it does not read, in order', async () => {
    running = await startTestPublisher({ flags: direct });
    await running.push();
    const parsed = requestsNodeParsed();
    const connection = await open();
    connection.send(path, { 'accept-encoding': 'identity' });
    const first = await connection.read();
    expect(first.status).toBe(200);
    connection.send(path, { 'accept-encoding': 'identity', 'if-none-match': first.headers.etag!, prefer: 'wait=20' });
    await running.untilWaiting(1);
    await running.push();
    const held = await connection.read();
    expect(held.status).toBe(200);
    expect(held.headers.etag).not.toBe(first.headers.etag);
    expect(parsed).toEqual([]);
    // Pipelined: a poll read here, the descriptor (Node's), then a poll that Node's path now reads.
    connection.socket.write(request(path, { 'if-none-match': held.headers.etag! }) + request('/streams/parking') + request(path, { 'if-none-match': held.headers.etag! }));
    expect((await connection.read()).status).toBe(304);
    expect((await connection.read()).headers['content-type']).toContain('text/turtle');
    expect((await connection.read()).status).toBe(304);
    expect(parsed).toEqual(['/streams/parking', path]);
    expect(connection.ended).toBe(false);
  });

  it('leaves to Node a head split between two reads, and one it does not read (a header twice), which Node answers', async () => {
    running = await startTestPublisher({ flags: direct });
    await running.push();
    const etag = running.hub.latest!.etags.turtle.identity;
    const parsed = requestsNodeParsed();
    const split = await open();
    const second = request(path, { 'if-none-match': etag });
    // One write (one read on loopback): a whole head, read here, and the start of the next.
    split.socket.write(request(path) + second.slice(0, 30));
    expect((await split.read()).status).toBe(200);
    // Answered, so read: the rest of the second head comes in a read of its own.
    split.socket.write(second.slice(30));
    expect((await split.read()).status).toBe(304);
    expect(parsed).toEqual([path]);
    const twice = await open();
    twice.socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nIf-None-Match: "a"\r\nIf-None-Match: ${etag}\r\n\r\n`);
    // Node joins them ("a", the current ETag): the answer is a 304.
    expect((await twice.read()).status).toBe(304);
    expect(parsed).toEqual([path, path]);
  });

  it('reads a head of DIRECT_HEAD_MAX_BYTES (8 KiB) itself, and leaves a longer one to Node', async () => {
    running = await startTestPublisher({ flags: direct });
    await running.push();
    const parsed = requestsNodeParsed();
    const headOf = (bytes: number) => {
      const start = `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Padding: `;
      return `${start}${'a'.repeat(bytes - start.length)}\r\n\r\n`;
    };
    const atLimit = await open();
    atLimit.socket.write(headOf(DIRECT_HEAD_MAX_BYTES));
    expect((await atLimit.read()).status).toBe(200);
    expect(parsed).toEqual([]);
    const overLimit = await open();
    overLimit.socket.write(headOf(DIRECT_HEAD_MAX_BYTES + 1));
    expect((await overLimit.read()).status).toBe(200);
    expect(parsed).toEqual([path]);
  });

  it('answers a malformed request after those read here through Node: 400 problem+json, after the answers before it', async () => {
    running = await startTestPublisher({ flags: direct });
    await running.push();
    const connection = await open();
    connection.socket.write(`${request(path)}GET ${path} HTTP/1.1\r\nHost: x\r\nAccept: text/turtle,\r\n application/trig\r\n\r\n`);
    expect((await connection.read()).status).toBe(200);
    const refused = await connection.read();
    expect(refused.status).toBe(400);
    expect(refused.headers['content-type']).toContain('application/problem+json');
  });

  it('closes a connection idle for keepAliveTimeoutMs, keeps one whose long-poll is held past it, and one that sends nothing for headersTimeoutMs', async () => {
    running = await startTestPublisher({ flags: [...direct, '--keep-alive-timeout-ms', '1000', '--headers-timeout-ms', '1000'] });
    await running.push();
    const parsed = requestsNodeParsed();
    const idle = await open();
    idle.send(path);
    expect((await idle.read()).status).toBe(200);
    const held = await open();
    held.send(path, { 'if-none-match': running.hub.latest!.etags.turtle.identity, prefer: 'wait=3' });
    const silent = await open();
    await Promise.all([idle.closed, silent.closed]);
    // Held past the keep-alive timeout, answered at the end of its wait, then idle until it too is closed.
    expect(held.ended).toBe(false);
    expect((await held.read()).status).toBe(304);
    await held.closed;
    expect(parsed).toEqual([]);
  });

  it('closes its idle connections at shutdown, and answers held long-polls Connection: close', async () => {
    running = await startTestPublisher({ flags: direct });
    await running.push();
    const idle = await open();
    idle.send(path);
    expect((await idle.read()).status).toBe(200);
    const held = await open();
    held.send(path, { 'if-none-match': running.hub.latest!.etags.turtle.identity, prefer: 'wait=30' });
    await running.untilWaiting(1);
    const closed = running.close();
    running = undefined;
    const answer = await held.read();
    expect(answer.status).toBe(304);
    expect(answer.headers.connection).toBe('close');
    await Promise.all([idle.closed, held.closed, closed]);
  });
});
