import { connect, createServer, type Server, type Socket } from 'node:net';

/** How a relayed connection is cut, as the client sees it. */
export type CutKind = 'server-close' | 'tcp-reset';

interface RelayedPair {
  readonly downstream: Socket;
  readonly upstream: Socket;
}

/**
 * A TCP relay between clients and the publisher, half-closes included, that can cut a
 * connection the way networks and servers do: a clean close from the server's side (FIN to the client, the upstream
 * connection closed too), or a TCP reset (RST to the client, as a crashed middlebox sends).
 */
export class TcpRelay {
  readonly #pairs = new Set<RelayedPair>();
  readonly #server: Server;
  readonly #target: { host: string; port: number };
  readonly cuts: Record<CutKind, number> = { 'server-close': 0, 'tcp-reset': 0 };

  constructor(target: { host: string; port: number }) {
    this.#target = target;
    // Half-open both ways, so that a side that ends (sends FIN) while still reading is relayed as
    // such: the other side's FIN follows its own, not the first one.
    this.#server = createServer({ noDelay: true, allowHalfOpen: true }, (downstream) => {
      const upstream = connect({ ...this.#target, noDelay: true, allowHalfOpen: true });
      const pair = { downstream, upstream };
      this.#pairs.add(pair);
      downstream.pipe(upstream);
      upstream.pipe(downstream);
      const forget = () => {
        this.#pairs.delete(pair);
        downstream.destroy();
        upstream.destroy();
      };
      downstream.on('error', forget).on('close', forget);
      upstream.on('error', forget).on('close', forget);
    });
  }

  get connections(): number {
    return this.#pairs.size;
  }

  /** Cuts every connection open now. */
  cutAll(kind: CutKind): void {
    for (const pair of [...this.#pairs]) this.#cut(pair, kind);
  }

  async listen(port = 0): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen({ port, host: '127.0.0.1', backlog: 4_096 }, resolve));
    return (this.#server.address() as { port: number }).port;
  }

  async close(): Promise<void> {
    for (const pair of this.#pairs) this.#cut(pair, 'tcp-reset');
    await new Promise((resolve) => this.#server.close(resolve));
  }

  #cut(pair: RelayedPair, kind: CutKind): void {
    if (!this.#pairs.has(pair)) return;
    this.#pairs.delete(pair);
    this.cuts[kind]++;
    pair.upstream.destroy();
    if (kind === 'tcp-reset') pair.downstream.resetAndDestroy();
    else pair.downstream.end();
  }
}
