import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { emptyStats } from '@rdf-stream/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Fleet } from '../../src/fleet/polling-client.js';
import { SourceEndpoint } from '../../src/fleet/source-endpoint.js';
import { type FleetClient, UpdateRecorder } from '../../src/fleet/update-recorder.js';
import { afterClose, websocketClient } from '../../src/fleet/websocket-client.js';
import { wsLibraryClient } from '../../src/fleet/ws-library-client.js';

/** An element message as the publisher's WebSocket sends it (docs/protocol.md): `element {id}`, then the Turtle. */
const element = (seq: number, generatedAt = new Date()) =>
  `element 7-${seq}\n<http://127.0.0.1/streams/parking/elements/7-${seq}> prov:generatedAtTime "${generatedAt.toISOString()}"^^xsd:dateTime .\n${'x'.repeat(5_000)}`;

let server: Server | undefined;
let wss: WebSocketServer | undefined;
afterEach(async () => {
  for (const socket of wss?.clients ?? []) socket.terminate();
  wss?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
});

/** A real WebSocket server (ws) at `/streams/parking/ws`; anything else is refused with 404. */
async function start(onConnection: (socket: WebSocket, request: IncomingMessage) => void): Promise<URL> {
  server = createServer((_request, response) => response.writeHead(404).end());
  wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (request, socket, head) => {
    if (!request.url?.startsWith('/streams/parking/ws')) {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    wss!.handleUpgrade(request, socket, head, (ws) => onConnection(ws, request));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return new URL(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/streams/parking/ws?format=turtle`);
}

const fastBackoff = { initialDelayMs: 1, maxDelayMs: 5 };

type Run = (fleet: Fleet, client: FleetClient, url: URL, source?: SourceEndpoint) => Promise<void>;
const clients: Array<[string, Run]> = [
  ['lean', (fleet, client, url, source) => websocketClient(fleet, client, { url, source, backoff: fastBackoff, maxMessageBytes: 1 << 20, stats: emptyStats() }, () => undefined)],
  // The ws library's client takes the client library's default backoff (1 s at first): the tests only wait for events.
  ['ws', (fleet, client, url, source) => wsLibraryClient(fleet, client, url, source, emptyStats(), () => undefined)],
];

/** A port free on `address` now: bound, never connected, so nothing keeps it once closed. */
async function freePortOn(address: string): Promise<number> {
  const probe = createServer().listen(0, address);
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe.each(clients)('the %s WebSocket client of the fleet', (_name, run) => {
  const newFleet = (): Fleet => ({ updates: new UpdateRecorder(0, 1), counters: { errors: 0, timeouts: 0, connected: 0 }, stopping: false });

  it('records every element with its latency, answers pings, and stops for good on 1001 (the stream ended)', async () => {
    const pongs: Buffer[] = [];
    const url = await start((socket) => {
      // Elements generated after the client has its answer (a pong proves it): earlier ones are not measured updates.
      socket.ping(Buffer.from('hb'));
      socket.on('pong', (data) => {
        pongs.push(data);
        socket.send(element(1));
        socket.send(element(2));
        socket.close(1001, '{"code":"stream-ended"}');
      });
    });
    const fleet = newFleet();
    const client: FleetClient = { connectedAt: undefined, seqs: [] };
    await run(fleet, client, url);
    expect(client.seqs).toEqual([1, 2]);
    expect(fleet.updates.updates).toBe(2);
    expect(fleet.updates.samples.every(([, latencyMs]) => latencyMs >= 0 && latencyMs < 10_000)).toBe(true);
    expect(pongs.map((data) => data.toString())).toEqual(['hb']);
    expect(fleet.counters).toMatchObject({ errors: 0, connected: 0 });
  });

  it('comes back after 1012 with the last element\'s id and misses nothing', async () => {
    const requests: string[] = [];
    const url = await start((socket, request) => {
      requests.push(request.url ?? '');
      socket.ping();
      socket.on('pong', () => {
        if (requests.length === 1) {
          socket.send(element(1));
          socket.send(element(2));
          socket.close(1012, '{"retryMs":5}');
        } else {
          socket.send(element(3));
          socket.close(1001);
        }
      });
    });
    const fleet = newFleet();
    const client: FleetClient = { connectedAt: undefined, seqs: [] };
    await run(fleet, client, url);
    expect(client.seqs).toEqual([1, 2, 3]);
    expect(requests).toEqual(['/streams/parking/ws?format=turtle', '/streams/parking/ws?format=turtle&lastEventId=7-2']);
  });

  it('connects first from the planned source address and port, and comes back from that address with a port the kernel chooses', async () => {
    const peers: Array<{ address: string | undefined; port: number | undefined }> = [];
    const url = await start((socket, request) => {
      peers.push({ address: request.socket.remoteAddress, port: request.socket.remotePort });
      socket.close(peers.length === 1 ? 1012 : 1001, peers.length === 1 ? '{"retryMs":5}' : '');
    });
    const planned = await freePortOn('127.0.0.2');
    await run(newFleet(), { connectedAt: undefined, seqs: [] }, url, new SourceEndpoint('127.0.0.2', planned));
    expect(peers).toHaveLength(2);
    expect(peers[0]).toEqual({ address: '127.0.0.2', port: planned });
    expect(peers[1]!.address).toBe('127.0.0.2');
    expect(peers[1]!.port).not.toBe(planned);
  });

  it('connects from a port the kernel chooses when its planned port was taken since the plan, with no error counted', async () => {
    const peers: Array<{ address: string | undefined; port: number | undefined }> = [];
    const url = await start((socket, request) => {
      peers.push({ address: request.socket.remoteAddress, port: request.socket.remotePort });
      socket.close(1001, '');
    });
    // The planned port, held on 127.0.0.2 by a listener (as by another connection of the fleet).
    const holder = createServer().listen(0, '127.0.0.2');
    await once(holder, 'listening');
    const planned = (holder.address() as AddressInfo).port;
    try {
      const fleet = newFleet();
      await run(fleet, { connectedAt: undefined, seqs: [] }, url, new SourceEndpoint('127.0.0.2', planned));
      expect(peers).toHaveLength(1);
      expect(peers[0]!.address).toBe('127.0.0.2');
      expect(peers[0]!.port).not.toBe(planned);
      expect(fleet.counters.errors).toBe(0);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('comes back after the connection drops without a close frame (1006)', async () => {
    let connections = 0;
    const url = await start((socket) => {
      connections++;
      if (connections === 1) socket.terminate();
      else socket.close(1001);
    });
    const fleet = newFleet();
    await run(fleet, { connectedAt: undefined, seqs: [] }, url);
    expect(connections).toBe(2);
  });

  it('counts a refused upgrade (404) as an error and does not retry it', async () => {
    const url = await start(() => undefined);
    url.pathname = '/streams/nope/ws';
    const fleet = newFleet();
    await run(fleet, { connectedAt: undefined, seqs: [] }, url);
    expect(fleet.counters.errors).toBe(1);
  });

  it('stops coming back once the fleet stops', async () => {
    let connections = 0;
    const url = await start((socket) => {
      connections++;
      socket.close(1013, '{"code":"PUB_ERR_OVERLOADED","retryMs":1}');
    });
    const fleet = newFleet();
    const done = run(fleet, { connectedAt: undefined, seqs: [] }, url);
    await vi.waitFor(() => expect(connections).toBeGreaterThan(0), { timeout: 5_000 });
    fleet.stopping = true;
    await done;
  });
});

describe('afterClose', () => {
  it('follows the close codes of docs/protocol.md', () => {
    expect(afterClose(1001, '{"code":"stream-ended"}')).toEqual({ reconnect: false, floorMs: 0 });
    expect(afterClose(1008, 'PUB_ERR_WS_CLIENT_MESSAGE')).toEqual({ reconnect: false, floorMs: 0 });
    expect(afterClose(1009, '')).toEqual({ reconnect: false, floorMs: 0 });
    expect(afterClose(1012, '{"retryMs":2500}')).toEqual({ reconnect: true, floorMs: 2_500 });
    expect(afterClose(1013, '{"code":"PUB_ERR_OVERLOADED","retryMs":800}')).toEqual({ reconnect: true, floorMs: 800 });
    expect(afterClose(4008, '{"code":"evicted","reason":"queue"}')).toEqual({ reconnect: true, floorMs: 0 });
    expect(afterClose(1006, '')).toEqual({ reconnect: true, floorMs: 0 });
    expect(afterClose(1012, '{not json')).toEqual({ reconnect: true, floorMs: 0 });
  });
});
