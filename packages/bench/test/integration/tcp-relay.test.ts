import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TcpRelay } from '../../src/reliability/tcp-relay.js';

/** The publisher's side: a TCP server on loopback whose accepted sockets the test can await. */
class Upstream {
  readonly server: Server;
  readonly #accepted: Socket[] = [];
  readonly #waiting: Array<(socket: Socket) => void> = [];

  /** `allowHalfOpen`: the server's sockets keep writing after the client's FIN, as an HTTP server answering a request does. */
  constructor(allowHalfOpen = false) {
    this.server = createServer({ allowHalfOpen }, (socket) => {
      const waiter = this.#waiting.shift();
      if (waiter === undefined) this.#accepted.push(socket);
      else waiter(socket);
    });
  }

  async listen(): Promise<number> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return (this.server.address() as AddressInfo).port;
  }

  /** The next connection the relay opens to this server. */
  accepted(): Promise<Socket> {
    const socket = this.#accepted.shift();
    return socket === undefined ? new Promise((resolve) => this.#waiting.push(resolve)) : Promise.resolve(socket);
  }

  close(): void {
    this.server.close();
  }
}

/** Everything a socket receives until it ends, and how it ended: a clean FIN or an error. */
function collect(socket: Socket): Promise<{ bytes: Buffer; error: NodeJS.ErrnoException | undefined }> {
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  let error: NodeJS.ErrnoException | undefined;
  socket.on('error', (cause: NodeJS.ErrnoException) => (error = cause));
  return new Promise((resolve) => socket.once('close', () => resolve({ bytes: Buffer.concat(chunks), error })));
}

/** The first `count` bytes a socket receives. */
function readBytes(socket: Socket, count: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let received = 0;
  return new Promise((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received >= count) resolve(Buffer.concat(chunks).subarray(0, count));
    });
    socket.once('close', () => reject(new Error(`closed after ${received} of ${count} bytes`)));
  });
}

/** `count` bytes that are not all alike, so that a reordered or dropped chunk shows. */
const pattern = (count: number, salt: number) => Buffer.from(Array.from({ length: count }, (_, index) => (index * 31 + salt) % 251));

let upstream: Upstream;
let relay: TcpRelay;
const clients: Socket[] = [];

async function start(allowHalfOpen = false): Promise<number> {
  upstream = new Upstream(allowHalfOpen);
  relay = new TcpRelay({ host: '127.0.0.1', port: await upstream.listen() });
  return relay.listen();
}

async function client(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  clients.push(socket);
  await once(socket, 'connect');
  return socket;
}

afterEach(async () => {
  for (const socket of clients.splice(0)) socket.destroy();
  await relay.close();
  upstream.close();
});

describe('TcpRelay', () => {
  it('relays bytes both ways, unchanged: a request in, then a response out and the server\'s FIN', async () => {
    const port = await start();
    const socket = await client(port);
    const server = await upstream.accepted();
    expect(relay.connections).toBe(1);

    const request = pattern(300_000, 1);
    const response = pattern(500_000, 2);
    const atClient = collect(socket);
    const atServer = readBytes(server, request.length);
    socket.write(request);
    expect((await atServer).equals(request)).toBe(true);
    server.end(response);
    const received = await atClient;
    expect(received.bytes.equals(response)).toBe(true);
    expect(received.error).toBeUndefined();
  });

  it('relays a half-close: a client that ends its side after the request still reads the whole response', async () => {
    const port = await start(true);
    const socket = await client(port);
    const server = await upstream.accepted();
    const atClient = collect(socket);
    const requestAtServer = collect(server);
    socket.end('the whole request');
    await once(server, 'end');
    server.end('the response, after the request ended');
    expect((await requestAtServer).bytes.toString()).toBe('the whole request');
    const received = await atClient;
    expect(received.bytes.toString()).toBe('the response, after the request ended');
    expect(received.error).toBeUndefined();
  });

  it('keeps each client on its own upstream connection', async () => {
    const port = await start();
    const first = await client(port);
    const firstServer = await upstream.accepted();
    const second = await client(port);
    const secondServer = await upstream.accepted();
    expect(relay.connections).toBe(2);
    const atFirst = collect(first);
    const atSecond = collect(second);
    firstServer.end('to the first');
    secondServer.end('to the second');
    expect((await atFirst).bytes.toString()).toBe('to the first');
    expect((await atSecond).bytes.toString()).toBe('to the second');
  });

  it('cuts with a clean close from the server\'s side: the client reads what came before and a FIN, the upstream connection closes too', async () => {
    const port = await start();
    const socket = await client(port);
    const server = await upstream.accepted();
    const atClient = collect(socket);
    const upstreamClosed = once(server, 'close');
    server.write('before the cut');
    await readBytes(socket, 'before the cut'.length);
    relay.cutAll('server-close');
    expect(relay.connections).toBe(0);
    expect(relay.cuts).toEqual({ 'server-close': 1, 'tcp-reset': 0 });
    const received = await atClient;
    expect(received.bytes.toString()).toBe('before the cut');
    expect(received.error).toBeUndefined();
    await upstreamClosed;
  });

  it('cuts with a TCP reset: the client gets ECONNRESET, the upstream connection closes too', async () => {
    const port = await start();
    const socket = await client(port);
    const server = await upstream.accepted();
    const atClient = collect(socket);
    const upstreamClosed = once(server, 'close');
    relay.cutAll('tcp-reset');
    expect(relay.connections).toBe(0);
    expect(relay.cuts).toEqual({ 'server-close': 0, 'tcp-reset': 1 });
    expect((await atClient).error?.code).toBe('ECONNRESET');
    await upstreamClosed;
  });

  it('cuts every connection open at the time, and only those: the relay accepts new ones after', async () => {
    const port = await start();
    const sockets = [await client(port), await client(port), await client(port)];
    for (let index = 0; index < sockets.length; index++) await upstream.accepted();
    const ended = sockets.map(collect);
    relay.cutAll('server-close');
    relay.cutAll('server-close');
    expect(relay.cuts['server-close']).toBe(3);
    await Promise.all(ended);

    const later = await client(port);
    const laterServer = await upstream.accepted();
    const atLater = collect(later);
    laterServer.end('still relaying');
    expect((await atLater).bytes.toString()).toBe('still relaying');
  });

  it('on close, resets the connections still open and stops listening', async () => {
    const port = await start();
    const socket = await client(port);
    await upstream.accepted();
    const atClient = collect(socket);
    await relay.close();
    expect((await atClient).error?.code).toBe('ECONNRESET');
    expect(relay.cuts['tcp-reset']).toBe(1);
    const refused = connect(port, '127.0.0.1');
    const [error] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
    expect(error.code).toBe('ECONNREFUSED');
  });
});
