import { connect, type Socket } from 'node:net';
import { plannedPortTaken, type SourceEndpoint } from './source-endpoint.js';

/** The request a polling client makes (`GET`, one at a time), as it gives it to undici's `request`. */
export interface LeanRequest {
  readonly path: string;
  readonly method: 'GET';
  readonly headers: Readonly<Record<string, string>>;
  /** Longest wait for the answer's head, then for the rest of its body (ms). */
  readonly headersTimeout: number;
  readonly bodyTimeout: number;
}

/** An answer as a polling client reads it: what undici's `request` resolves with, the parts read. */
export interface LeanResponse {
  readonly statusCode: number;
  /** Lower-case names; a repeated header's values joined with `, `. */
  readonly headers: Record<string, string>;
  /** `received`: the whole body, as it came (a poller reads what it needs of it without decoding it). */
  readonly body: { text(): Promise<string>; dump(): Promise<void>; readonly received: Buffer };
}

/** The longest head of an answer read (bytes): a status line and the publisher's few headers. */
export const MAX_HEAD_BYTES = 16 * 1024;
/** The largest body read (bytes): `/latest`'s elements are kilobytes. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: |$)/;
const HEAD_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');

/** A failure of a lean request, with the code the fleet counts it by (`ETIMEDOUT` is a timeout). */
export class LeanHttpError extends Error {
  override readonly name = 'LeanHttpError';
  constructor(
    message: string,
    readonly code: 'ETIMEDOUT' | 'ECONNRESET' | 'EPROTO',
  ) {
    super(message);
  }
}

class TextBody {
  constructor(readonly received: Buffer) {}
  text(): Promise<string> {
    return Promise.resolve(this.received.toString('utf8'));
  }
  dump(): Promise<void> {
    return Promise.resolve();
  }
}

interface Pending {
  /** The request as written, for a connection opened again from another port. */
  readonly head: string;
  readonly resolve: (response: LeanResponse) => void;
  readonly reject: (error: Error) => void;
  readonly headersTimeout: number;
  readonly bodyTimeout: number;
}

/**
 * One long-poller's keep-alive connection: HTTP/1.1 over a bare `net.Socket`, one request at a
 * time, the answer read whole (status line, headers, a `Content-Length` or chunked body) before
 * it is handed over, as `LeanResponse` — what the fleet's polling client reads of undici's
 * answer. It costs a fraction of undici's `request` per answer (no request and handler objects,
 * no body stream, no pool to search for an idle connection) and keeps its one connection: undici
 * closes a pooled connection after the server's `Keep-Alive: timeout` hint, which a long-poll
 * connection idle between two held requests of another client reached, so that thousands
 * reconnected after some elements. What it reads is checked: an answer that is not HTTP/1.x, a
 * header line without a colon, a body without framing, bytes no request asked for, or an answer
 * over `MAX_HEAD_BYTES` / `MAX_BODY_BYTES` is a protocol error (`EPROTO`), which ends the
 * connection; the next request opens another.
 */
export class LeanHttpConnection {
  readonly #host: string;
  readonly #hostHeader: string;
  readonly #port: number;
  readonly #source: SourceEndpoint | undefined;
  readonly #onSocket: (socket: Socket) => void;
  #socket: Socket | undefined;
  #pending: Pending | undefined;
  /** Bytes of the answer being read, until it is whole. */
  #buffered: Buffer | undefined;
  /** The answer's head, once read, while its body is not. */
  #head: { statusCode: number; headers: Record<string, string>; keepAlive: boolean; bodyBytes: number | 'chunked' } | undefined;
  /**
   * The connection's one timer, refreshed for each wait rather than made anew: a long-poller's
   * request waits seconds, long enough for a timer made per request (and its closure) to
   * outlive the young generation, and 4 000 of them per worker to cost the worker's collector.
   */
  #timer: NodeJS.Timeout | undefined;
  #timerMs = 0;
  /** What the armed wait is for; undefined when none is (the timer then does nothing if it fires). */
  #timerWhat: string | undefined;
  readonly #onTimer = () => {
    const what = this.#timerWhat;
    this.#timerWhat = undefined;
    if (what !== undefined) this.#timedOut(what);
  };

  /**
   * `source`: where its connections come from (undefined: wherever the kernel chooses). `onSocket`
   * is told of every connection opened (the fleet destroys them when it stops).
   */
  constructor(origin: URL, source: SourceEndpoint | undefined, onSocket: (socket: Socket) => void) {
    this.#host = origin.hostname;
    this.#port = Number(origin.port || 80);
    this.#source = source;
    this.#onSocket = onSocket;
    this.#hostHeader = origin.host;
  }

  request(options: LeanRequest): Promise<LeanResponse> {
    if (this.#pending !== undefined) return Promise.reject(new Error('one request at a time'));
    let head = `${options.method} ${options.path} HTTP/1.1\r\nhost: ${this.#hostHeader}\r\n`;
    for (const name in options.headers) head += `${name}: ${options.headers[name]}\r\n`;
    head += '\r\n';
    return new Promise((resolve, reject) => {
      this.#pending = { head, resolve, reject, headersTimeout: options.headersTimeout, bodyTimeout: options.bodyTimeout };
      this.#armTimer(options.headersTimeout, 'no answer');
      const socket = this.#socket ?? this.#open();
      socket.write(head, 'latin1');
    });
  }

  #open(): Socket {
    const source = this.#source?.take();
    const socket = connect({ host: this.#host, port: this.#port, ...source });
    socket.setNoDelay(true);
    this.#socket = socket;
    this.#onSocket(socket);
    let connected = false;
    socket.once('connect', () => (connected = true));
    socket.on('data', (chunk: Buffer) => this.#read(socket, chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // The planned port was taken meanwhile: the same request, at once, from a port the kernel chooses.
      if (!connected && plannedPortTaken(error, source) && this.#socket === socket) this.#reopen(socket);
      else this.#lost(socket, error);
    });
    socket.on('close', () => this.#lost(socket, new LeanHttpError('the connection closed', 'ECONNRESET')));
    return socket;
  }

  /** Opens the connection again (the source's port is no longer planned) and sends the request in flight on it. */
  #reopen(socket: Socket): void {
    this.#socket = undefined;
    socket.destroy();
    const head = this.#pending?.head;
    const next = this.#open();
    if (head !== undefined) next.write(head, 'latin1');
  }

  /** The connection ended: a request in flight fails with `error`. */
  #lost(socket: Socket, error: Error): void {
    if (this.#socket !== socket) return;
    this.#socket = undefined;
    this.#buffered = undefined;
    this.#head = undefined;
    socket.destroy();
    this.#fail(error);
  }

  #fail(error: Error): void {
    const pending = this.#pending;
    this.#pending = undefined;
    this.#stopTimer();
    pending?.reject(error);
  }

  /** Ends the connection on something it should not have read; the request in flight fails. */
  #protocolError(socket: Socket, message: string): void {
    this.#lost(socket, new LeanHttpError(message, 'EPROTO'));
  }

  #armTimer(ms: number, what: string): void {
    if (ms <= 0) {
      this.#timerWhat = undefined;
      return;
    }
    if (this.#timer !== undefined && this.#timerMs === ms) this.#timer.refresh();
    else {
      this.#stopTimer();
      this.#timerMs = ms;
      this.#timer = setTimeout(this.#onTimer, ms);
    }
    this.#timerWhat = what;
  }

  /** Nothing is waited for; the timer stays, to be refreshed by the next request. */
  #clearTimer(): void {
    this.#timerWhat = undefined;
  }

  /** The timer goes: the connection is lost, or the wait has another length. */
  #stopTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerWhat = undefined;
  }

  #timedOut(what: string): void {
    this.#stopTimer();
    const socket = this.#socket;
    const error = new LeanHttpError(`${what} within the timeout`, 'ETIMEDOUT');
    if (socket === undefined) this.#fail(error);
    else this.#lost(socket, error);
  }

  #read(socket: Socket, chunk: Buffer): void {
    if (this.#pending === undefined) {
      this.#protocolError(socket, 'bytes no request asked for');
      return;
    }
    let bytes = this.#buffered === undefined ? chunk : Buffer.concat([this.#buffered, chunk]);
    this.#buffered = undefined;
    if (this.#head === undefined) {
      const end = bytes.indexOf(HEAD_END);
      if (end < 0) {
        if (bytes.length > MAX_HEAD_BYTES) this.#protocolError(socket, 'a head over the limit');
        else this.#buffered = bytes;
        return;
      }
      const head = this.#parseHead(bytes.toString('latin1', 0, end));
      if (typeof head === 'string') {
        this.#protocolError(socket, head);
        return;
      }
      this.#head = head;
      bytes = bytes.subarray(end + HEAD_END.length);
      this.#armTimer(this.#pending.bodyTimeout, 'no whole body');
    }
    const head = this.#head;
    let body: Buffer;
    if (head.bodyBytes === 'chunked') {
      const decoded = decodeChunked(bytes);
      if (decoded === 'incomplete') {
        if (bytes.length > MAX_BODY_BYTES) this.#protocolError(socket, 'a body over the limit');
        else this.#buffered = bytes;
        return;
      }
      if (typeof decoded === 'string') {
        this.#protocolError(socket, decoded);
        return;
      }
      body = decoded.body;
      bytes = bytes.subarray(decoded.consumed);
    } else {
      if (bytes.length < head.bodyBytes) {
        this.#buffered = bytes;
        return;
      }
      body = bytes.subarray(0, head.bodyBytes);
      bytes = bytes.subarray(head.bodyBytes);
    }
    if (bytes.length > 0) {
      this.#protocolError(socket, 'bytes past the answer');
      return;
    }
    const pending = this.#pending;
    this.#pending = undefined;
    this.#head = undefined;
    this.#clearTimer();
    if (!head.keepAlive) {
      this.#socket = undefined;
      socket.destroy();
    }
    pending.resolve({ statusCode: head.statusCode, headers: head.headers, body: new TextBody(body) });
  }

  /** The status line and header fields, or what is wrong with them. */
  #parseHead(text: string): { statusCode: number; headers: Record<string, string>; keepAlive: boolean; bodyBytes: number | 'chunked' } | string {
    const lines = text.split('\r\n');
    const status = STATUS_LINE.exec(lines[0] as string);
    if (status === null) return 'not an HTTP/1.x status line';
    const statusCode = Number(status[2]);
    const headers: Record<string, string> = {};
    for (let index = 1; index < lines.length; index++) {
      const line = lines[index] as string;
      const colon = line.indexOf(':');
      if (colon <= 0) return 'a header line without a name';
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      const earlier = headers[name];
      headers[name] = earlier === undefined ? value : `${earlier}, ${value}`;
    }
    const connection = headers.connection?.toLowerCase() ?? '';
    const keepAlive = status[1] === '1' ? !connection.includes('close') : connection.includes('keep-alive');
    let bodyBytes: number | 'chunked';
    if (statusCode === 204 || statusCode === 304 || (statusCode >= 100 && statusCode < 200)) bodyBytes = 0;
    else if (headers['transfer-encoding'] !== undefined) {
      if (headers['transfer-encoding'].toLowerCase() !== 'chunked') return 'a transfer coding other than chunked';
      bodyBytes = 'chunked';
    } else {
      const length = headers['content-length'];
      if (length === undefined || !/^\d+$/.test(length)) return 'a body without a length';
      bodyBytes = Number(length);
      if (bodyBytes > MAX_BODY_BYTES) return 'a body over the limit';
    }
    return { statusCode, headers, keepAlive, bodyBytes };
  }
}

/** A whole chunked body at the start of `bytes` (RFC 9112 §7.1, no trailers), 'incomplete', or what is wrong with it. */
export function decodeChunked(bytes: Buffer): { body: Buffer; consumed: number } | 'incomplete' | string {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = bytes.indexOf(CRLF, offset);
    if (lineEnd < 0) return 'incomplete';
    const sizeText = bytes.toString('latin1', offset, lineEnd).split(';')[0]!.trim();
    if (!/^[0-9a-fA-F]{1,8}$/.test(sizeText)) return 'a chunk without a size';
    const size = Number.parseInt(sizeText, 16);
    const start = lineEnd + CRLF.length;
    if (size === 0) {
      if (bytes.length < start + CRLF.length) return 'incomplete';
      if (!bytes.subarray(start, start + CRLF.length).equals(CRLF)) return 'trailers after the last chunk';
      return { body: Buffer.concat(parts), consumed: start + CRLF.length };
    }
    if (bytes.length < start + size + CRLF.length) return 'incomplete';
    if (!bytes.subarray(start + size, start + size + CRLF.length).equals(CRLF)) return 'a chunk longer than its size';
    parts.push(bytes.subarray(start, start + size));
    offset = start + size + CRLF.length;
  }
}
