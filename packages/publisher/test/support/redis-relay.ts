import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket, connect } from 'node:net';

/**
 * A TCP relay in front of a Redis server that a test can freeze: from then on nothing passes in
 * either direction and no connection closes, as when a network partition leaves a client's
 * commands unanswered while the server, and the leases it keeps, go on. Thawed, what was held
 * passes, late.
 */
export class RedisRelay {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #frozen = false;
  /** What arrived while frozen, in order, with where it goes. */
  readonly #held: Array<{ readonly to: Socket; readonly chunk: Buffer }> = [];

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(targetPort: number): Promise<RedisRelay> {
    const server = createServer();
    const relay = new RedisRelay(server);
    server.on('connection', (client) => relay.#relay(client, targetPort));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return relay;
  }

  get url(): string {
    return `redis://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Stops forwarding anything, new connections' bytes too: what arrives is held. */
  freeze(): void {
    this.#frozen = true;
  }

  /** Forwards again, starting with what was held. */
  thaw(): void {
    this.#frozen = false;
    for (const { to, chunk } of this.#held.splice(0)) if (!to.destroyed) to.write(chunk);
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    this.#server.close();
    await once(this.#server, 'close');
  }

  #relay(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.#sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => this.#sockets.delete(socket));
    }
    const forward = (to: Socket) => (chunk: Buffer) => (this.#frozen ? this.#held.push({ to, chunk }) : to.write(chunk));
    client.on('data', forward(upstream));
    upstream.on('data', forward(client));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }
}
