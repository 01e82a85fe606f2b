import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { streamPath, streamPathPattern } from '@rdf-stream/protocol';
import type { AppContext } from './app-context.js';
import { fastOutcome, formatOfQuery } from './fast-latest.js';
import type { HeldLongPolls } from './held-long-polls.js';
import type { LatestRequestHeaders, LatestResponder } from './latest-responder.js';
import type { SocketAnswers } from './socket-answers.js';

const latestPath = streamPathPattern('latest');
const latestRoute = streamPath(':id', 'latest');

/** Longest request head this path reads, in bytes (request line and headers); a longer one goes to Node's parser. */
export const DIRECT_HEAD_MAX_BYTES = 8_192;

const HEAD_END = Buffer.from('\r\n\r\n');
const REQUEST_LINE = /^(GET|HEAD) ([\x21-\x7e]+) HTTP\/1\.1$/;
/** RFC 9110 `token`: a header name. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A header value's octets (RFC 9110 `field-value`): no control character but tab, so no bare CR or LF. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** The headers of a `/latest` request its answer depends on (`LatestRequestHeaders`), each read once at most. */
const READ_HEADERS = ['accept', 'accept-encoding', 'if-none-match', 'if-modified-since', 'prefer'] as const;
type ReadHeader = (typeof READ_HEADERS)[number];
const isReadHeader = (name: string): name is ReadHeader => (READ_HEADERS as readonly string[]).includes(name);

/**
 * The last value read of each header, and the last stream id: thousands of clients send the same
 * few (the newest element's ETag, one `Accept`, one `Prefer: wait=N`), and a request read anew
 * gets the very string read before rather than a fresh one. A fresh one is a slice of the whole
 * request head (V8 keeps a slice of a longer string as a view of it), so every long-poll held
 * here kept its head alive until its answer, through the garbage collections of its wait.
 * Shared, the head dies with the read, and comparing two held requests' headers
 * (`HeldLongPolls`) compares the same strings. A new value replaces the last, copied out of its
 * head first: requests that alternate between two values (two streams, two formats) each get a
 * copy of theirs (a buffer and a string the length of the value), not shared.
 */
const lastRead = new Map<ReadHeader | 'streamId', string>();

function shared(name: ReadHeader | 'streamId', value: string): string {
  const last = lastRead.get(name);
  if (last === value) return last;
  const copy = Buffer.from(value, 'latin1').toString('latin1');
  lastRead.set(name, copy);
  return copy;
}

/** A request head this path serves: GET or HEAD of `/streams/{id}/latest`, with the headers its answer depends on. */
export interface DirectLatestRequest {
  readonly head: boolean;
  readonly streamId: string;
  readonly headers: LatestRequestHeaders;
}

/**
 * Reads the request head `bytes` (without its final empty line, latin1 as on the wire) as a plain
 * `/latest` request of a keep-alive connection, or returns undefined for anything else, which is
 * Node's to parse and answer: another method, path or HTTP version; a request with a body
 * (`Content-Length`, `Transfer-Encoding`), `Connection` other than `keep-alive`, `Upgrade` or
 * `Expect`; no `Host` or several; a header this path reads given twice; and any head that is not
 * strictly well-formed (obsolete line folding, a bare CR or LF, a control character, a name that
 * is not a token). Only the undoubted is read here: whatever Node would parse otherwise is left
 * to it.
 */
export function parseDirectLatestRequest(head: string): DirectLatestRequest | undefined {
  let lineEnd = head.indexOf('\r\n');
  if (lineEnd < 0) return undefined;
  const requestLine = REQUEST_LINE.exec(head.slice(0, lineEnd));
  if (requestLine === null) return undefined;
  const target = latestPath.exec(requestLine[2] as string);
  if (target === null) return undefined;
  // Every header the answer depends on, present from the start (one shape for every request read).
  const headers: Record<ReadHeader, string | undefined> & { format: string | undefined } = {
    accept: undefined,
    'accept-encoding': undefined,
    'if-none-match': undefined,
    'if-modified-since': undefined,
    prefer: undefined,
    format: undefined,
  };
  let hosts = 0;
  while (lineEnd < head.length) {
    const start = lineEnd + 2;
    lineEnd = head.indexOf('\r\n', start);
    if (lineEnd < 0) lineEnd = head.length;
    const colon = head.indexOf(':', start);
    if (colon < 0 || colon >= lineEnd) return undefined;
    const name = head.slice(start, colon);
    if (!TOKEN.test(name)) return undefined;
    const value = head.slice(colon + 1, lineEnd).replace(/^[\t ]+|[\t ]+$/g, '');
    if (!FIELD_VALUE.test(value)) return undefined;
    const lowerName = name.toLowerCase();
    switch (lowerName) {
      case 'host':
        hosts += 1;
        break;
      case 'connection':
        if (value.toLowerCase() !== 'keep-alive') return undefined;
        break;
      case 'content-length':
      case 'transfer-encoding':
      case 'upgrade':
      case 'expect':
        return undefined;
      default:
        if (!isReadHeader(lowerName)) break;
        if (headers[lowerName] !== undefined) return undefined;
        headers[lowerName] = shared(lowerName, value);
    }
  }
  if (hosts !== 1) return undefined;
  headers.format = formatOfQuery(target[2]);
  return { head: requestLine[1] === 'HEAD', streamId: shared('streamId', target[1] as string), headers };
}

/** The internals of a socket's stream handle that Node's HTTP server itself uses to stop reading a paused connection. */
interface ReadingHandle {
  reading: boolean;
  readStart(): number;
  readStop(): number;
}
const handleOf = (socket: Socket) => (socket as unknown as { _handle: ReadingHandle | null })._handle;

/**
 * A paused connection is not read at all until it is resumed, as Node's HTTP server does for its
 * own (a stream paused only stops emitting what it goes on reading into its buffer): a connection
 * answered by an element is paused until the release has answered all (`HeldLongPolls`), and its
 * client's next request then waits in the kernel, not read between two batches of the release.
 */
function stopReading(this: Socket): void {
  const handle = handleOf(this);
  if (handle?.reading === true) {
    handle.reading = false;
    handle.readStop();
  }
}

function startReading(this: Socket): void {
  const handle = handleOf(this);
  if (handle !== null && !handle.reading) {
    handle.reading = true;
    handle.readStart();
  }
}

export interface DirectLatestOptions {
  readonly context: AppContext;
  readonly responder: LatestResponder;
  readonly heldLongPolls: HeldLongPolls;
  readonly socketAnswers: SocketAnswers;
  /** Whether the publisher sheds load or is under pressure now: every request then goes to Node's path, which answers 503. */
  readonly busy: () => boolean;
  /** Called when a request of `socket` is read here: it is no longer a connection that has begun none. */
  readonly onRequest: (socket: Socket) => void;
}

/**
 * Polls and long-polls of `/latest` read by the publisher itself, without Node's HTTP parser and
 * its request and response objects: what a poll costs beyond the write of its answer is then the
 * read of a few hundred bytes, where Node's parser makes a request and a response object and
 * calls into JavaScript for each. Measured (docs/bench-results.md): about a fifth less of the
 * publisher's CPU per update with 8 000 long-polling clients, at the same latency; the default
 * (`latestRequestParser: direct`).
 *
 * Every connection comes here first. Each chunk its client sends is read as whole request heads
 * (`parseDirectLatestRequest`); a head answered at once is written whole (`SocketAnswers`), a
 * long-poll is held by its socket (`HeldLongPolls.holdOn`). The first request not read here —
 * another route, anything `parseDirectLatestRequest` leaves to Node, a request that errs, the
 * long-poll limit, load shedding, shutdown, or a head split between two chunks — hands the
 * connection to Node's HTTP server for the rest of its life, with the bytes from that request's
 * first on: Node parses them as if it had read them, after every answer given here (a long-poll
 * held here is answered first, as for any request pipelined behind it). So nothing is
 * interpreted twice, and no request is read here that Node would read otherwise; the request
 * bodies and their framing (request smuggling's ground) are never read here.
 *
 * A connection read here has Node's timeouts: `headersTimeoutMs` until its first request (then
 * it is destroyed, as Node does), `keepAliveTimeoutMs` idle between requests, none while a
 * long-poll is held. At shutdown the idle ones are closed (`closeIdle`), as Node closes its own.
 */
export class DirectLatestRequests {
  readonly #options: DirectLatestOptions;
  readonly #headersTimeoutMs: number;
  readonly #keepAliveTimeoutMs: number;
  /** Connections that have not been handed to Node, until they close. */
  readonly #sockets = new Set<Socket>();

  constructor(options: DirectLatestOptions) {
    this.#options = options;
    this.#headersTimeoutMs = options.context.config.headersTimeoutMs;
    this.#keepAliveTimeoutMs = options.context.config.keepAliveTimeoutMs;
  }

  /**
   * Puts itself between `server` and Node's handling of each connection; false, and nothing
   * changed, when `server` does not have Node's own `connection` listener alone (call it right
   * after `createServer`).
   */
  install(server: Server): boolean {
    const listeners = server.listeners('connection');
    if (listeners.length !== 1) return false;
    const toNode = listeners[0] as (socket: Socket) => void;
    server.removeListener('connection', toNode);
    server.on('connection', (socket: Socket) => this.#accept(socket, (rest) => {
      toNode.call(server, socket);
      // Parsed by Node at once, before anything the client sends next (which Node now reads itself).
      if (rest !== undefined && rest.length > 0) socket.emit('data', rest);
    }));
    return true;
  }

  /** Closes every connection read here that has no long-poll held (held ones are answered `Connection: close`): at shutdown. */
  closeIdle(): void {
    for (const socket of this.#sockets) {
      if (this.#options.heldLongPolls.isHeld(socket)) continue;
      // An answer still in Node's buffer is sent first.
      if (socket.writableLength > 0) socket.end();
      else socket.destroy();
    }
  }

  #accept(socket: Socket, toNode: (rest: Buffer | undefined) => void): void {
    this.#sockets.add(socket);
    const onError = () => socket.destroy();
    const onTimeout = () => this.#options.heldLongPolls.timedOut(socket);
    // HTTP servers' sockets are half-open (`allowHalfOpen`): a client that ends its side is ended
    // once what was written to it is sent, as Node does; a long-poll held is cancelled as it closes.
    const onEnd = () => socket.end();
    const onClose = () => this.#sockets.delete(socket);
    const handOff = (rest: Buffer | undefined) => {
      for (const [event, listener] of listeners) socket.removeListener(event, listener);
      socket.setTimeout(0);
      this.#sockets.delete(socket);
      toNode(rest);
    };
    let begun = false;
    const onData = (chunk: Buffer) => {
      let start = 0;
      while (start < chunk.length) {
        const end = chunk.indexOf(HEAD_END, start);
        if (end < 0 || end - start > DIRECT_HEAD_MAX_BYTES) return handOff(chunk.subarray(start));
        const request = parseDirectLatestRequest(chunk.toString('latin1', start, end));
        if (request === undefined || !this.#serve(socket, request)) return handOff(chunk.subarray(start));
        if (!begun) {
          begun = true;
          this.#options.onRequest(socket);
          socket.setTimeout(this.#keepAliveTimeoutMs);
        }
        start = end + HEAD_END.length;
        if (socket.destroyed) return;
      }
    };
    // Each added here, and removed when the connection goes to Node (`handOff`).
    const listeners: ReadonlyArray<readonly [string, Parameters<Socket['removeListener']>[1]]> = [
      ['data', onData],
      ['error', onError],
      ['timeout', onTimeout],
      ['end', onEnd],
      ['close', onClose],
      ['pause', stopReading],
      ['resume', startReading],
    ];
    for (const [event, listener] of listeners) socket.on(event, listener);
    socket.setTimeout(this.#headersTimeoutMs);
  }

  /** Answers or holds `request`; false when Node's path must (see the class), and then nothing has been written. */
  #serve(socket: Socket, request: DirectLatestRequest): boolean {
    const { context, responder, heldLongPolls, socketAnswers } = this.#options;
    if (context.lifecycle.closing || this.#options.busy()) return false;
    const hub = context.hubs.get(request.streamId);
    if (hub === undefined) return false;
    const nowMs = Date.now();
    const outcome = fastOutcome(responder, hub, request.headers, nowMs);
    if (outcome === undefined) return false;
    // A request pipelined behind a long-poll held here comes after that one's answer.
    const connection = heldLongPolls.beforeRequest(socket);
    if (outcome.kind === 'send') {
      socket.write(socketAnswers.bytes(outcome, request.head, false, nowMs));
      if (connection !== undefined) heldLongPolls.answeredOnSocket(connection);
      context.metrics.requestAnswered(latestRoute, request.head ? 'HEAD' : 'GET', outcome.status);
      return true;
    }
    return heldLongPolls.holdOn(socket, hub, request.headers, outcome.seconds, request.head);
  }
}
