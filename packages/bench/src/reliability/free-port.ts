import { createServer } from 'node:net';
import { readPortRange } from '../collect/port-usage.js';

/** How many ports below the kernel's ephemeral range a port is drawn from; none under `LOWEST_PORT`. */
const PORTS_BELOW_EPHEMERAL = 16_384;
const LOWEST_PORT = 10_000;
/** Ports drawn before the kernel picks one. */
const ATTEMPTS = 64;

function listenable(port: number): Promise<number | undefined> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(undefined));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      const { port: bound } = server.address() as { port: number };
      server.close(() => resolve(bound));
    });
  });
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago, for a service or publisher told its port
 * before it starts. Drawn below the kernel's ephemeral range, as the publisher's tests draw
 * theirs (`freePort` in `@rdf-stream/publisher/testing`, which the bench may not import): a port
 * the kernel picks comes from that range, where the fleet's thousands of outgoing connections
 * may take it as their local port before the service listens.
 */
export async function freePort(random: () => number = Math.random): Promise<number> {
  const high = readPortRange().low - 1;
  const low = Math.max(LOWEST_PORT, high - PORTS_BELOW_EPHEMERAL + 1);
  for (let attempt = 0; high - low >= 1_000 && attempt < ATTEMPTS; attempt++) {
    const port = await listenable(low + Math.floor(random() * (high - low + 1)));
    if (port !== undefined) return port;
  }
  const port = await listenable(0);
  if (port === undefined) throw new Error('no port to listen on 127.0.0.1');
  return port;
}
