import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { kernelQueuedBytes } from '../../src/reliability/process-probe.js';

describe('kernelQueuedBytes (Linux, loopback)', () => {
  it("counts a never-reading client's receive queue and what its server has not had acknowledged", async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const serverPort = (server.address() as AddressInfo).port;
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const client = connect(serverPort, '127.0.0.1');
    client.pause();
    await once(client, 'connect');
    const [socket] = await accepted;
    socket.write(Buffer.alloc(1024 * 1024));
    const clientPorts = new Set([client.localPort as number]);
    await vi.waitFor(() => {
      const queued = kernelQueuedBytes(serverPort, clientPorts);
      expect(queued.connections).toBe(1);
      expect(queued.clientReceiveBytes).toBeGreaterThan(0);
      expect(queued.serverSendBytes).toBeGreaterThan(0);
    }, { timeout: 10_000 });
    expect(kernelQueuedBytes(serverPort, new Set([1]))).toEqual({ serverSendBytes: 0, clientReceiveBytes: 0, connections: 0 });
    client.destroy();
    socket.destroy();
    server.close();
  });
});
