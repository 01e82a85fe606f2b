import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectionKey, ProcNetTcpSendQueues } from '../../src/publish/sse/kernel-send-queues.js';
import { patience } from '../support/patience.js';

describe('ProcNetTcpSendQueues (Linux, loopback)', () => {
  const sockets: Socket[] = [];
  afterEach(() => {
    for (const socket of sockets) socket.destroy();
  });

  it("finds a real connection by its socket's ends, with what its client has not acknowledged", async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const client = connect(port, '127.0.0.1');
    client.pause(); // never reads: what its receive buffer cannot take stays in the server's queue
    sockets.push(client);
    const [socket] = await accepted;
    sockets.push(socket);
    socket.write(Buffer.alloc(4 * 1024 * 1024));
    const key = connectionKey(socket) as string;
    const queued = async () => {
      let bytes = -1;
      expect(await new ProcNetTcpSendQueues().snapshot((found, queuedBytes) => found === key && (bytes = queuedBytes))).toBe(true);
      return bytes;
    };
    await vi.waitFor(async () => expect(await queued()).toBeGreaterThan(0), patience);
    server.close();
  });
});
