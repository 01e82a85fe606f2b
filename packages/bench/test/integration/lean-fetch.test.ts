import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { leanFetch } from '../../src/fleet/lean-fetch.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

let server: Server | undefined;
let pool: Pool | undefined;

/** A real HTTP server on loopback, and a pool to it from `localAddress`. */
async function serve(handler: Handler, localAddress = '127.0.0.1'): Promise<{ url: string; pool: Pool }> {
  server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  pool = new Pool(origin, { connections: 4, pipelining: 1, localAddress });
  return { url: `${origin}/streams/parking/latest?format=turtle`, pool };
}

afterEach(async () => {
  await pool?.destroy();
  server?.closeAllConnections();
  server?.close();
  pool = undefined;
  server = undefined;
});

describe('leanFetch: the transports’ fetch over an undici pool', () => {
  it('answers like fetch: status, headers (repeated ones joined), the whole body; path and query as asked', async () => {
    const seen: string[] = [];
    const { url, pool } = await serve((request, response) => {
      seen.push(`${request.url} ${request.headers.accept}`);
      response.setHeader('etag', '"7"');
      response.setHeader('vary', ['Accept', 'Accept-Encoding']);
      response.end('<a> <b> <c> .');
    });
    const response = await leanFetch(pool, { timeoutMs: 5_000 })(url, { headers: { accept: 'text/turtle' } });
    expect(response.status).toBe(200);
    expect(response.ok).toBe(true);
    expect(response.headers.get('etag')).toBe('"7"');
    expect(response.headers.get('vary')).toBe('Accept, Accept-Encoding');
    expect(await response.text()).toBe('<a> <b> <c> .');
    expect(seen).toEqual(['/streams/parking/latest?format=turtle text/turtle']);
  });

  it('gives a 304 no body, and the connection serves the next request', async () => {
    const { url, pool } = await serve((request, response) => {
      response.statusCode = request.headers['if-none-match'] === '"7"' ? 304 : 200;
      response.end(response.statusCode === 200 ? 'body' : undefined);
    });
    const fetchOverPool = leanFetch(pool, { timeoutMs: 5_000 });
    const notModified = await fetchOverPool(url, { headers: { 'if-none-match': '"7"' } });
    expect(notModified.status).toBe(304);
    expect(notModified.body).toBeNull();
    expect(await (await fetchOverPool(url, { headers: {} })).text()).toBe('body');
  });

  it('streams an event stream: the first event is readable while the response goes on', async () => {
    let finish!: () => void;
    const { url, pool } = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('id: 1\ndata: first\n\n');
      finish = () => response.end('id: 2\ndata: second\n\n');
    });
    const response = await leanFetch(pool, { timeoutMs: 100 })(url, { headers: { accept: 'text/event-stream' } });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    expect((await reader.read()).value).toBe('id: 1\ndata: first\n\n');
    finish();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += chunk.value;
    expect(rest).toBe('id: 2\ndata: second\n\n');
  });

  it('ends an event stream when its signal aborts (a transport giving up its connection)', async () => {
    const { url, pool } = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(': open\n\n');
    });
    const connection = new AbortController();
    const response = await leanFetch(pool, { timeoutMs: 5_000 })(url, { headers: { accept: 'text/event-stream' }, signal: connection.signal });
    const reader = response.body!.getReader();
    await reader.read();
    connection.abort();
    await expect(reader.read()).rejects.toThrow();
  });

  it('sends a request again, once, when its connection was closed under it; a second failure is thrown', async () => {
    let requests = 0;
    const { url, pool } = await serve((request, response) => {
      requests++;
      if (request.headers['x-fail'] === 'always' || requests === 1) request.socket.destroy();
      else response.end('ok');
    });
    const fetchOverPool = leanFetch(pool, { timeoutMs: 5_000 });
    expect(await (await fetchOverPool(url, { headers: {} })).text()).toBe('ok');
    expect(requests).toBe(2);
    await expect(fetchOverPool(url, { headers: { 'x-fail': 'always' } })).rejects.toThrow();
    expect(requests).toBe(4);
  });

  it('gives up on a server that does not answer within timeoutMs, and says so', async () => {
    const { url, pool } = await serve(() => undefined);
    let timeouts = 0;
    await expect(leanFetch(pool, { timeoutMs: 200, onTimeout: () => timeouts++ })(url, { headers: {} })).rejects.toThrow(/timeout/i);
    expect(timeouts).toBe(1);
  });

  it('connects from the pool’s source address (the fleet spreads over 127.0.0.x)', async () => {
    const { url, pool } = await serve((request, response) => response.end(request.socket.remoteAddress), '127.0.0.2');
    expect(await (await leanFetch(pool, { timeoutMs: 5_000 })(url, { headers: {} })).text()).toBe('127.0.0.2');
  }, 10_000);
});
