import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay on its own port in front of a server: what a client connects through when a test
 * must cut its connection as a network does (both sockets destroyed, no close frame, no FIN
 * exchange the client could take for a goodbye).
 */
export class TcpRelay {
  readonly #server: Server;
  readonly #pairs = new Set<readonly [Socket, Socket]>();
  /** Connections relayed so far. */
  accepted = 0;
  /** While true, every new connection is destroyed at once (the network is down). */
  down = false;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(targetPort: number): Promise<TcpRelay> {
    const server = createServer();
    const relay = new TcpRelay(server);
    server.on('connection', (client) => {
      if (relay.down) {
        client.destroy();
        return;
      }
      relay.accepted++;
      const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
      const pair = [client, upstream] as const;
      relay.#pairs.add(pair);
      const drop = () => {
        relay.#pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return relay;
  }

  get port(): number {
    return (this.#server.address() as { port: number }).port;
  }

  /** Connections open through the relay now. */
  get open(): number {
    return this.#pairs.size;
  }

  /** Destroys every relayed connection at once. */
  cut(): void {
    for (const [client, upstream] of this.#pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.#pairs.clear();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}
