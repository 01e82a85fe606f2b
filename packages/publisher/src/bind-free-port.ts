import { once } from 'node:events';
import { createServer, type Server } from 'node:net';

/**
 * A socket listening on a port the system picks, for the HTTP server to take over once the
 * publisher is built (no other process can take the port meanwhile). Nobody knows the port
 * before the publisher announces it, so no client connects in between (one that did would get
 * no answer).
 */
export async function bindFreePort(host: string, backlog: number): Promise<Server> {
  const server = createServer({ pauseOnConnect: true });
  server.listen({ host, port: 0, backlog });
  await once(server, 'listening');
  return server;
}

/** The port `server` listens on. */
export function boundPort(server: Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new TypeError('not listening on a TCP port');
  return address.port;
}
