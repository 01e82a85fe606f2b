/**
 * An ingest request refused before its body is read (413 announced by Content-Length, 401, 415)
 * from a client that writes its whole body before it reads: the publisher must read and discard
 * the rest of the body (up to ingestMaxDiscardBytes) so that the client receives the answer,
 * instead of closing a socket with unread bytes in it (a TCP reset: EPIPE, ECONNRESET, and the
 * answer lost).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestPublisher } from '../../src/testing.js';
import { startIngestPublisher } from '../support/ingest-publisher.js';

const TOKEN = 'sensors-token-0123456789abcdef';
const BODY_BYTES = 4 * 1024 * 1024;
const TRIES = 10;

let running: TestPublisher;
beforeAll(async () => {
  running = await startIngestPublisher(TOKEN, ['--ingest-max-body-bytes', '65536', '--ingest-max-discard-bytes', String(BODY_BYTES)]);
});
afterAll(async () => {
  await running?.close();
});

interface Exchange {
  /** Everything read from the socket once the whole request was written (or the write failed). */
  readonly answer: string;
  /** The socket's error, if any (EPIPE, ECONNRESET). */
  readonly error: string | undefined;
}

/**
 * Writes the request's headers and a `bodyBytes` body in one go, as a client that reads only
 * once its request is written, and then reads the answer until the publisher ends or resets.
 */
function exchange(headers: Record<string, string>, bodyBytes: number): Promise<Exchange> {
  const { port } = new URL(running.url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    socket.pause();
    let answer = '';
    let error: string | undefined;
    const chunked = headers['transfer-encoding'] === 'chunked';
    const framing = chunked ? {} : { 'content-length': String(bodyBytes) };
    const head = Object.entries({ host: '127.0.0.1', ...framing, ...headers }).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.on('error', (cause: NodeJS.ErrnoException) => (error ??= cause.code ?? cause.message));
    socket.on('close', () => resolve({ answer, error }));
    socket.write(`POST /streams/sensors HTTP/1.1\r\n${head}\r\n`);
    const body = Buffer.alloc(bodyBytes, 0x20);
    socket.write(chunked ? Buffer.concat([Buffer.from(`${bodyBytes.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]) : body, () => {
      // Written: now read.
      socket.setEncoding('utf8').on('data', (chunk: string) => {
        answer += chunk;
        // The answer is whole: close our side (the publisher may keep the connection).
        const end = answer.indexOf('\r\n\r\n');
        const length = /content-length: (\d+)/i.exec(answer);
        if (end >= 0 && length !== null && answer.length >= end + 4 + Number(length[1])) socket.end();
      });
      socket.resume();
    });
  });
}

const problemOf = (answer: string) => {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]),
    type: /content-type: ([^;\r]+)/i.exec(head)?.[1],
    code: (JSON.parse(body || '{}') as { code?: string }).code,
    connection: /connection: ([^\r]+)/i.exec(head)?.[1],
  };
};

describe('a refusal before the body is read reaches a client that writes its whole body first', () => {
  it(`413 for a ${BODY_BYTES / 1024 / 1024} MiB body announced by Content-Length: every one of ${TRIES} tries reads the problem+json`, async () => {
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < TRIES; attempt++) {
      const { answer, error } = await exchange({ authorization: `Bearer ${TOKEN}`, 'content-type': 'text/turtle' }, BODY_BYTES);
      const { status, type, code } = problemOf(answer);
      // The body was read: the connection could serve another request.
      expect(problemOf(answer).connection).not.toBe('close');
      outcomes.push(error ?? `${status} ${type} ${code}`);
    }
    expect(outcomes).toEqual(new Array(TRIES).fill('413 application/problem+json PUB_ERR_BODY_TOO_LARGE'));
  }, 60_000);

  it('413 found while reading a chunked body (no Content-Length): the rest is discarded too', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const { answer, error } = await exchange({ authorization: `Bearer ${TOKEN}`, 'content-type': 'text/turtle', 'transfer-encoding': 'chunked' }, BODY_BYTES - 64);
      expect({ error, ...problemOf(answer) }).toMatchObject({ error: undefined, status: 413, code: 'PUB_ERR_BODY_TOO_LARGE' });
    }
  }, 60_000);

  it('401 (wrong token) and 415 (unsupported Content-Type) alike', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const unauthorized = await exchange({ authorization: 'Bearer wrong-token-0123456789abcdef', 'content-type': 'text/turtle' }, BODY_BYTES);
      expect({ error: unauthorized.error, ...problemOf(unauthorized.answer) }).toMatchObject({ error: undefined, status: 401, code: 'PUB_ERR_UNAUTHORIZED' });
      const unsupported = await exchange({ authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain' }, BODY_BYTES);
      expect({ error: unsupported.error, ...problemOf(unsupported.answer) }).toMatchObject({ error: undefined, status: 415, code: 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE' });
    }
  }, 60_000);
});

describe('ingestMaxDiscardBytes (the limit)', () => {
  it('a body announced beyond it is not read: the answer says Connection: close and the publisher closes', async () => {
    const { port } = new URL(running.url);
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.on('error', () => undefined);
    // Only the headers: a publisher that waited for the body would never answer.
    socket.write(`POST /streams/sensors HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${TOKEN}\r\ncontent-type: text/turtle\r\ncontent-length: ${BODY_BYTES + 1}\r\n\r\n`);
    await closed;
    expect(problemOf(answer)).toMatchObject({ status: 413, code: 'PUB_ERR_BODY_TOO_LARGE', connection: 'close' });
  });

  it('a chunked body that goes on beyond it has its connection cut once the limit is read', async () => {
    const { port } = new URL(running.url);
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    let written = 0;
    socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    socket.on('error', () => undefined);
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.write('POST /streams/sensors HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer wrong-token-0123456789abcdef\r\ncontent-type: text/turtle\r\ntransfer-encoding: chunked\r\n\r\n');
    // Up to three times the limit, 64 KiB a chunk, each once the previous one is taken.
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let open = true;
    void closed.then(() => (open = false));
    const write = (data: string | Buffer) => new Promise<void>((resolve) => (socket.write(data) ? resolve() : socket.once('drain', resolve)));
    while (open && written < 3 * BODY_BYTES) {
      await Promise.race([write(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])), closed]);
      written += chunk.length;
    }
    await closed;
    expect(problemOf(answer)).toMatchObject({ status: 401, code: 'PUB_ERR_UNAUTHORIZED' });
    expect(written).toBeLessThan(3 * BODY_BYTES);
  });
});
