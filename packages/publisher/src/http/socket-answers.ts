import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { wireResponse } from '../render/wire-response.js';
import type { LatestOutcome } from './latest-responder.js';

/** An answer of `/latest` that is sent (not held). */
export type SentAnswer = Extract<LatestOutcome, { kind: 'send' }>;

/** The internals of Node's `ServerResponse` that say whether its head has been written. */
interface ResponseHeadState {
  _header: string | null;
  _headerSent: boolean;
}

/** What a response answered on its socket says its head was (never written: any non-empty string). */
export const HEAD_WRITTEN_ON_THE_SOCKET = 'answered on the socket';

/** A whole response, made once per representation and second, for every connection it answers. */
interface WireBytes {
  readonly dateSecond: number;
  readonly date: string;
  get?: Buffer;
  head?: Buffer;
  getClosing?: Buffer;
  headClosing?: Buffer;
}

/**
 * `/latest`'s answers written whole on their connection's socket: status line, headers and body
 * made once per representation and second (`wireResponse`, as Node's `ServerResponse` would put
 * them on the wire) and shared by every connection they answer, with one `write` of those bytes
 * and nothing of Node's per-response work (its headers checked and joined again for each
 * response, a cork, a `writev` of head and body). Node takes such a response for ended with
 * nothing written (`release`), so that it lets its request and response objects go and reads
 * the connection's next request as after any response.
 *
 * Only a response on its own connection, which stays open for a next request, is answered so
 * (`connection`): not an injected request, `Connection: close`, HTTP/1.0 or a pipelined
 * response whose turn has not come, which are answered with their response.
 */
export class SocketAnswers {
  readonly #keepAliveSeconds: number;
  readonly #wire = new WeakMap<Readonly<OutgoingHttpHeaders>, WireBytes>();
  #lastWire: { readonly headers: Readonly<OutgoingHttpHeaders>; readonly wire: WireBytes } | undefined;

  constructor(keepAliveTimeoutMs: number) {
    this.#keepAliveSeconds = Math.floor(keepAliveTimeoutMs / 1000);
  }

  /**
   * The socket `response` can be answered on whole (see the class), or undefined: it must be
   * answered with the response itself.
   */
  static connection(response: ServerResponse): Socket | undefined {
    const socket = response.socket;
    if (!(socket instanceof Socket) || !response.shouldKeepAlive || socket.destroyed) return undefined;
    const headState = response as unknown as ResponseHeadState;
    // Node versions whose responses keep no such state answer with the response.
    if (headState._header !== null || headState._headerSent !== false) return undefined;
    return socket;
  }

  /**
   * Ends `response` as far as Node knows, with nothing written: its answer is written (or will
   * be) on its socket. Node writes nothing for a response whose head it takes for sent, and
   * its request and response can be collected.
   */
  static release(response: ServerResponse): void {
    const headState = response as unknown as ResponseHeadState;
    headState._header = HEAD_WRITTEN_ON_THE_SOCKET;
    headState._headerSent = true;
    response.end();
  }

  /**
   * Answers `response` with `answer` written whole on its socket, and ends it; false when it
   * cannot be answered so (`connection`), and then nothing has been written.
   */
  answer(response: ServerResponse, answer: SentAnswer, head: boolean, nowMs: number): boolean {
    const socket = SocketAnswers.connection(response);
    if (socket === undefined) return false;
    socket.write(this.bytes(answer, head, false, nowMs));
    SocketAnswers.release(response);
    return true;
  }

  /**
   * The whole response for `answer`, made once per representation, second and kind of request;
   * `closing`: the connection's last (`Connection: close`).
   */
  bytes(answer: SentAnswer, head: boolean, closing: boolean, nowMs: number): Buffer {
    const dateSecond = Math.floor(nowMs / 1000);
    // The last one used first: pollers and a release ask for the same, thousands of times.
    const last = this.#lastWire;
    let wire = last?.headers === answer.headers ? last.wire : this.#wire.get(answer.headers);
    if (wire === undefined || wire.dateSecond !== dateSecond) {
      wire = { dateSecond, date: new Date(dateSecond * 1000).toUTCString() };
      this.#wire.set(answer.headers, wire);
    }
    if (last?.wire !== wire) this.#lastWire = { headers: answer.headers, wire };
    // No closure made per answer: under tsx (the bench, `pnpm start`) each would be named by a `defineProperty`, µs each.
    if (closing) return head ? (wire.headClosing ??= wireBytes(answer, head, wire, 'close')) : (wire.getClosing ??= wireBytes(answer, head, wire, 'close'));
    return head ? (wire.head ??= wireBytes(answer, head, wire, this.#keepAliveSeconds)) : (wire.get ??= wireBytes(answer, head, wire, this.#keepAliveSeconds));
  }
}

/** `answer` as the bytes of a whole response: status line, headers (with the `Date` of `wire`), and the body unless `head`. */
function wireBytes(answer: SentAnswer, head: boolean, wire: WireBytes, keepAliveSeconds: number | 'close'): Buffer {
  return wireResponse(answer.status, answer.headers, head ? undefined : answer.body, wire.date, { keepAliveSeconds });
}
