import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { ElementMonitor } from '../../src/collect/element-monitor.js';

const stamp = (seq: number, at: string) => `<http://127.0.0.1/streams/s/elements/k3x9-${seq}> prov:generatedAtTime "${at}"^^xsd:dateTime .`;
let server: Server | undefined;
let monitor: ElementMonitor | undefined;
afterEach(() => {
  monitor?.stop();
  server?.closeAllConnections();
  server?.close();
});

/** A stream served by `handler` on loopback, followed by a new monitor. */
async function follow(handler: RequestListener): Promise<{ monitor: ElementMonitor; started: Promise<void> }> {
  server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  monitor = new ElementMonitor();
  return { monitor, started: monitor.start(`http://127.0.0.1:${(server.address() as AddressInfo).port}/streams/s`) };
}

it('counts every element published, resuming with Last-Event-ID when its connection drops', async () => {
  const lastEventIds: Array<string | undefined> = [];
  let resumed!: () => void;
  const secondElementSent = new Promise<void>((resolve) => (resumed = resolve));
  const { monitor, started } = await follow((request, response) => {
    lastEventIds.push(request.headers['last-event-id'] as string | undefined);
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    if (lastEventIds.length === 1) {
      // the first connection drops right after element 1
      response.end(`retry: 10\nid: k3x9-1\ndata: ${stamp(1, '2026-11-23T00:00:01.000Z')}\n\n`);
    } else {
      response.write(`id: k3x9-2\ndata: ${stamp(2, '2026-11-23T00:00:02.500Z')}\n\n`, () => resumed());
    }
  });
  await started;
  await secondElementSent;
  await expect.poll(() => monitor.published.size).toBe(2);
  expect([...monitor.published]).toEqual([
    [1, Date.parse('2026-11-23T00:00:01.000Z')],
    [2, Date.parse('2026-11-23T00:00:02.500Z')],
  ]);
  expect(lastEventIds).toEqual([undefined, 'k3x9-1']);
  expect(monitor.reconnects).toBe(1);
});

it('rejects start when the publisher refuses the stream', async () => {
  const { started } = await follow((_request, response) => {
    response.writeHead(404, { 'content-type': 'application/problem+json' });
    response.end('{"title":"Not Found","status":404}');
  });
  await expect(started).rejects.toThrow(/404/);
});
