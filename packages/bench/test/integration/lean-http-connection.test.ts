import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { emptyStats, LongPollSession, transportDefaults } from '@rdf-stream/client';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeChunked, LeanHttpConnection, type LeanRequest } from '../../src/fleet/lean-http-connection.js';
import { SourceEndpoint } from '../../src/fleet/source-endpoint.js';
import { type Fleet, pollingClient } from '../../src/fleet/polling-client.js';
import { type FleetClient, UpdateRecorder } from '../../src/fleet/update-recorder.js';

const opened: Array<() => void> = [];
afterEach(() => {
  for (const close of opened.splice(0)) close();
});

async function listening(server: Server | ReturnType<typeof createHttpServer>): Promise<URL> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  opened.push(() => server.close());
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/streams/s/latest`);
}

/** A server that answers each request on a connection with the next of `answers`, written as raw bytes in the pieces given. */
async function rawServer(answers: Array<string[] | ((socket: Socket) => void)>) {
  const requests: string[] = [];
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    opened.push(() => socket.destroy());
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      for (let end = text.indexOf('\r\n\r\n'); end >= 0; end = text.indexOf('\r\n\r\n')) {
        requests.push(text.slice(0, end));
        text = text.slice(end + 4);
        const answer = answers.shift();
        if (answer === undefined) socket.destroy();
        else if (typeof answer === 'function') answer(socket);
        else for (const piece of answer) socket.write(piece);
      }
    });
  });
  const url = await listening(server);
  return { url, requests, connections: () => connections };
}

/** A connection to `url` (from `source`), whose sockets go into `sockets` and are destroyed after the test. */
function connectionTo(url: URL, source?: SourceEndpoint, sockets: Socket[] = []): LeanHttpConnection {
  opened.push(() => sockets.forEach((socket) => socket.destroy()));
  return new LeanHttpConnection(url, source, (socket) => sockets.push(socket));
}

/** A server that notes where each connection comes from, and answers its first request with `answer`. */
async function peerServer(answer: (socket: Socket) => void) {
  const peers: Array<{ address: string | undefined; port: number | undefined }> = [];
  const server = createServer((socket) => {
    peers.push({ address: socket.remoteAddress, port: socket.remotePort });
    opened.push(() => socket.destroy());
    socket.once('data', () => answer(socket));
  });
  return { url: await listening(server), peers };
}

const get = (headers: Record<string, string> = {}, timeoutMs = 5_000): LeanRequest => ({
  path: '/streams/s/latest',
  method: 'GET',
  headers,
  headersTimeout: timeoutMs,
  bodyTimeout: timeoutMs,
});

describe('LeanHttpConnection', () => {
  it('opens its first connection from the planned source address and port, and the next from that address with a port the kernel chooses', async () => {
    // Answers one request, then closes: the next request needs a new connection.
    const { url, peers } = await peerServer((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok'));
    // A port free on 127.0.0.2 now: bound, never connected, so nothing keeps it once closed.
    const probe = createServer().listen(0, '127.0.0.2');
    await once(probe, 'listening');
    const planned = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const connection = connectionTo(url, new SourceEndpoint('127.0.0.2', planned));
    expect(await (await connection.request(get())).body.text()).toBe('ok');
    expect(await (await connection.request(get())).body.text()).toBe('ok');
    expect(peers).toHaveLength(2);
    expect(peers[0]).toEqual({ address: '127.0.0.2', port: planned });
    expect(peers[1]!.address).toBe('127.0.0.2');
    expect(peers[1]!.port).not.toBe(planned);
  });

  it('sends its first request from a port the kernel chooses when the planned port was taken since the plan, and fails nothing', async () => {
    const { url, peers } = await peerServer((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
    // The planned port, held on 127.0.0.2 by a listener (as by another connection of the fleet) when the client connects.
    const holder = createServer().listen(0, '127.0.0.2');
    await once(holder, 'listening');
    opened.push(() => holder.close());
    const planned = (holder.address() as AddressInfo).port;
    const sockets: Socket[] = [];
    const connection = connectionTo(url, new SourceEndpoint('127.0.0.2', planned), sockets);
    expect(await (await connection.request(get())).body.text()).toBe('ok');
    expect(peers).toHaveLength(1);
    expect(peers[0]!.address).toBe('127.0.0.2');
    expect(peers[0]!.port).not.toBe(planned);
    // The connection that found the port taken, then the one that was answered.
    expect(sockets).toHaveLength(2);
  });

  it('sends each request on one kept-alive connection and reads Content-Length and empty bodies, in pieces', async () => {
    const { url, requests, connections } = await rawServer([
      ['HTTP/1.1 200 OK\r\nContent-Type: text/turtle\r\nETag: "1"\r\nContent-Length: 5\r\n\r\nhello'],
      ['HTTP/1.1 304 Not Modified\r\nETag: "1"\r\n', 'Vary: Accept\r\nVary: Prefer\r\n\r\n'],
      ['HTTP/1.1 200 OK\r\nContent-Le', 'ngth: 9\r\n\r\nwor', 'ld é.'],
    ]);
    const connection = connectionTo(url);
    const first = await connection.request(get({ accept: 'text/turtle' }));
    expect(first.statusCode).toBe(200);
    expect(first.headers).toMatchObject({ 'content-type': 'text/turtle', etag: '"1"' });
    expect(await first.body.text()).toBe('hello');
    const second = await connection.request(get({ 'if-none-match': '"1"', prefer: 'wait=30' }));
    expect(second.statusCode).toBe(304);
    expect(second.headers.vary).toBe('Accept, Prefer');
    expect(await second.body.text()).toBe('');
    const third = await connection.request(get());
    expect(await third.body.text()).toBe('world é.');
    expect(connections()).toBe(1);
    expect(requests[0]).toBe(`GET /streams/s/latest HTTP/1.1\r\nhost: ${url.host}\r\naccept: text/turtle`);
    expect(requests[1]).toContain('\r\nif-none-match: "1"\r\nprefer: wait=30');
  });

  it('reads a chunked body, and opens a new connection after one that said Connection: close', async () => {
    const { url, connections } = await rawServer([
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n', '3\r\nabc\r\n', '2;x=y\r\nde\r\n0\r\n\r\n'],
      ['HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'],
    ]);
    const connection = connectionTo(url);
    expect(await (await connection.request(get())).body.text()).toBe('abcde');
    expect(await (await connection.request(get())).body.text()).toBe('ok');
    expect(connections()).toBe(2);
  });

  it.each([
    ['a status line that is not HTTP/1.x', ['HTTP/2 200\r\nContent-Length: 0\r\n\r\n']],
    ['a header line without a colon', ['HTTP/1.1 200 OK\r\nContent-Length 0\r\n\r\n']],
    ['a body without framing', ['HTTP/1.1 200 OK\r\nContent-Type: text/turtle\r\n\r\nhello']],
    ['bytes past the answer', ['HTTP/1.1 304 Not Modified\r\n\r\nHTTP/1.1 200 OK\r\n']],
    ['a chunk longer than its size', ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n']],
  ])('fails the request and ends the connection on %s', async (_what, answer) => {
    const { url } = await rawServer([answer]);
    await expect(connectionTo(url).request(get())).rejects.toMatchObject({ code: 'EPROTO' });
  });

  it('fails a request its server closes before answering, and one it leaves unanswered past the timeout', async () => {
    const { url } = await rawServer([(socket) => socket.destroy(), () => undefined]);
    const connection = connectionTo(url);
    await expect(connection.request(get())).rejects.toMatchObject({ code: 'ECONNRESET' });
    await expect(connection.request(get({}, 50))).rejects.toMatchObject({ code: 'ETIMEDOUT' });
  });

  it('times each request from when it was sent, with one timer per connection: an answered request is never failed later', async () => {
    const ok = ['HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'];
    const { url } = await rawServer([ok, ok, () => undefined]);
    const connection = connectionTo(url);
    await expect(connection.request(get({}, 100))).resolves.toMatchObject({ statusCode: 200 });
    // Past the first request's timeout with nothing asked (time is what is tested here): its timer fails nothing.
    await new Promise((resolve) => setTimeout(resolve, 150));
    await expect(connection.request(get({}, 100))).resolves.toMatchObject({ statusCode: 200 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    // Timed from its own sending, not from the request before it (which would end it 40 ms after it was sent).
    const sentAtMs = Date.now();
    await expect(connection.request(get({}, 100))).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    expect(Date.now() - sentAtMs).toBeGreaterThanOrEqual(90);
  });

  it('carries a long-poller through held answers of node:http, recording each element', async () => {
    // The first element was generated before the client came: the state it found, not an update.
    const element = (seq: number) =>
      `@prefix prov: <http://www.w3.org/ns/prov#>.\n<http://h/streams/s/elements/ep-${seq}> prov:generatedAtTime "${new Date(Date.now() - (seq === 1 ? 60_000 : 0)).toISOString()}"^^xsd:dateTime.\n`;
    let seq = 1;
    const seen: Array<string | undefined> = [];
    const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
      seen.push(req.headers['if-none-match']);
      if (seq > 3) {
        res.writeHead(404).end();
        return;
      }
      // Held a little, as the publisher holds a long-poll until the next element.
      setImmediate(() => {
        res.writeHead(200, { 'content-type': 'text/turtle', etag: `"${seq}"` }).end(element(seq));
        seq++;
      });
    });
    const url = await listening(server);
    const stats = emptyStats();
    const session = new LongPollSession({ format: 'turtle', waitSeconds: 30, backoff: transportDefaults.backoff, stats });
    const fleet: Fleet = { updates: new UpdateRecorder(0, 0), counters: { errors: 0, timeouts: 0, connected: 0 }, stopping: false };
    const client: FleetClient = { connectedAt: undefined, seqs: [] };
    await pollingClient(fleet, client, { dispatcher: connectionTo(url), path: url.pathname, requestTimeoutMs: 5_000, session });
    expect(seen).toEqual([undefined, '"1"', '"2"', '"3"']);
    expect(client.seqs).toEqual([2, 3]);
    expect(stats).toMatchObject({ requests: 4, elements: 3 });
    expect(fleet.counters.errors).toBe(1);
  });
});

describe('decodeChunked', () => {
  it('says incomplete until the last chunk and its CRLF have come', () => {
    expect(decodeChunked(Buffer.from('3\r\nabc\r\n0\r\n'))).toBe('incomplete');
    expect(decodeChunked(Buffer.from('3\r\nab'))).toBe('incomplete');
    expect(decodeChunked(Buffer.from('zz\r\n'))).toBe('a chunk without a size');
    expect(decodeChunked(Buffer.from('0\r\nx: y\r\n\r\n'))).toBe('trailers after the last chunk');
  });
});
