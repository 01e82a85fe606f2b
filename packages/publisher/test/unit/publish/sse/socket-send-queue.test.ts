import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectionKey, ProcNetTcpSendQueues } from '../../../../src/publish/sse/kernel-send-queues.js';
import { socketSendQueue } from '../../../../src/publish/sse/socket-send-queue.js';
import { patience } from '../../../support/patience.js';

const opened: Array<Server | Socket> = [];
afterEach(() => {
  for (const handle of opened.splice(0)) {
    if ('destroy' in handle) handle.destroy();
    else handle.close();
  }
});

/** A real loopback connection: the server's end, and a client that reads nothing until resumed. */
async function connection(): Promise<{ server: Socket; client: Socket }> {
  const listener = createServer();
  opened.push(listener);
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const address = listener.address() as { port: number };
  const accepted = once(listener, 'connection') as Promise<[Socket]>;
  const client = connect(address.port, '127.0.0.1');
  client.pause();
  opened.push(client);
  const [server] = await accepted;
  opened.push(server);
  return { server, client };
}

/** The server end's tx_queue in the kernel's table. */
async function fromTable(socket: Socket): Promise<number | undefined> {
  const key = connectionKey(socket);
  let queued: number | undefined;
  await new ProcNetTcpSendQueues().snapshot((found, bytes) => {
    if (found === key) queued = bytes;
  });
  return queued;
}

describe('socketSendQueue (ioctl SIOCOUTQ through koffi, Linux)', () => {
  // This project installs its optional dependency koffi, and its CI and machines are Linux x64:
  // the reader must load there, or every check falls back to reading the whole table.
  const reader = socketSendQueue('auto');

  it('loads here, and is never used when the table is asked for', () => {
    expect(reader).toBeDefined();
    expect(socketSendQueue('table')).toBeUndefined();
  });

  it('reads what the kernel holds for a client that reads nothing, the same as /proc/net/tcp', async () => {
    const { server } = await connection();
    // Far more than the client's receive buffer and the server's send buffer take.
    for (let chunk = 0; chunk < 256; chunk++) server.write(Buffer.alloc(16 * 1024));
    // Until the client's receive buffer is full its kernel acknowledges, and the server's
    // kernel takes more: the two readings agree once nothing moves any more.
    await vi.waitFor(
      async () => {
        const queued = reader?.queued(server);
        expect(queued).toBeGreaterThan(64 * 1024);
        expect(await fromTable(server)).toBe(queued);
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(server.writableLength).toBeGreaterThan(0); // what the kernel refused waits in the process
  });

  it('reads 0 once the client has read and acknowledged everything', async () => {
    const { server, client } = await connection();
    const size = 256 * 1024;
    server.write(Buffer.alloc(size));
    let received = 0;
    client.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    client.resume();
    await vi.waitFor(() => expect(received).toBe(size), patience);
    // The last acknowledgement may be delayed by the client's kernel (delayed ACK, ~40 ms).
    await vi.waitFor(() => expect(reader?.queued(server)).toBe(0), patience);
  });

  it('reads nothing of a socket closed, or of a stand-in with no descriptor', async () => {
    const { server } = await connection();
    server.destroy();
    expect(reader?.queued(server)).toBeUndefined();
    expect(reader?.queued({ bytesWritten: 0, writableLength: 0 })).toBeUndefined();
  });
});
