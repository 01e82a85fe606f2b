import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

/** One response as it came off the wire. */
export interface RawResponse {
  readonly status: number;
  /** Header lines in their order, names lower-cased. */
  readonly headerLines: ReadonlyArray<readonly [string, string]>;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** The response's bytes, head and body. */
  readonly bytes: Buffer;
}

/**
 * An HTTP/1.1 connection driven by hand: requests written as given (several at once to pipeline
 * them), responses read in order off the same socket. A response to HEAD, or with status 304,
 * has no body whatever its Content-Length says; any other is read to its Content-Length.
 */
export class RawHttpConnection {
  readonly socket: Socket;
  #buffered = Buffer.alloc(0);
  #ended = false;
  #wake: (() => void) | undefined;
  /** Resolves when the server closes the connection. */
  readonly closed: Promise<unknown>;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.#buffered = Buffer.concat([this.#buffered, chunk]);
      this.#wake?.();
    });
    socket.on('end', () => {
      this.#ended = true;
      this.#wake?.();
    });
    this.closed = once(socket, 'close');
  }

  static async open(url: string): Promise<RawHttpConnection> {
    const { hostname, port } = new URL(url);
    const socket = connect({ host: hostname, port: Number(port) });
    await once(socket, 'connect');
    return new RawHttpConnection(socket);
  }

  /** Writes `GET path` (or `method`) with `headers` and `Host`. */
  send(path: string, headers: Record<string, string> = {}, method = 'GET'): void {
    this.socket.write(request(path, headers, method));
  }

  /** Bytes received and not yet read as a response. */
  get pending(): number {
    return this.#buffered.length;
  }

  /** Whether the server has ended its side. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The next response; `head`: it answers a HEAD (no body). */
  async read(head = false): Promise<RawResponse> {
    for (;;) {
      const parsed = parseResponse(this.#buffered, head);
      if (parsed !== undefined) {
        this.#buffered = this.#buffered.subarray(parsed.bytes.length);
        return parsed;
      }
      if (this.#ended) throw new Error(`the server ended the connection with ${this.#buffered.length} bytes of an incomplete response`);
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The bytes of a request. */
export function request(path: string, headers: Record<string, string> = {}, method = 'GET'): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'host: localhost', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

function parseResponse(buffer: Buffer, head: boolean): RawResponse | undefined {
  const end = buffer.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]);
  const headerLines = lines.map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()] as const;
  });
  const headers = Object.fromEntries(headerLines);
  const length = head || status === 304 || status === 204 ? 0 : Number(headers['content-length'] ?? 0);
  if (buffer.length < end + 4 + length) return undefined;
  const bytes = Buffer.from(buffer.subarray(0, end + 4 + length));
  return { status, headerLines, headers, body: bytes.subarray(end + 4), bytes };
}

/**
 * What a test file's tests open by hand: raw connections and listeners of diagnostics channels,
 * all ended by `close` (after each test).
 */
export class OpenedByTests {
  readonly #connections: RawHttpConnection[] = [];
  readonly #unsubscribes: Array<() => void> = [];

  async connect(url: string): Promise<RawHttpConnection> {
    const connection = await RawHttpConnection.open(url);
    this.#connections.push(connection);
    return connection;
  }

  /** Calls `onMessage` with every message of the diagnostics channel `channel` until `close`. */
  listen(channel: string, onMessage: (message: unknown) => void): void {
    subscribe(channel, onMessage);
    this.#unsubscribes.push(() => unsubscribe(channel, onMessage));
  }

  /** Stops listening first, then closes the connections. */
  close(): void {
    for (const stop of this.#unsubscribes.splice(0)) stop();
    for (const connection of this.#connections.splice(0)) connection.close();
  }
}
