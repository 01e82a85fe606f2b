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

/**
 * A port free a moment ago, for processes that must all name it before any of them listens:
 * `--port 0` with workers (the cluster's writer and workers, or the instances on a shared log)
 * mint the same IRIs, so the port is picked before anything is built. The workers bind it later,
 * through the primary (node:cluster shares one socket): the probe is closed first, and another
 * process could take the port in between — the workers would then fail to listen, and the start
 * with them.
 */
export async function pickFreePort(host: string, backlog: number): Promise<number> {
  const probe = await bindFreePort(host, backlog);
  const port = boundPort(probe);
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
