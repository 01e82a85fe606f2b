import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { streamPath } from '@rdf-stream/protocol';
import type { LongPollWaiter, WaitOutcome } from '../publish/latest/long-poll-waiters.js';
import { watchProgress } from '../publish/sse/guarded-sink.js';
import { NOT_WATCHED, type ProgressWatch } from '../publish/sse/send-progress-monitor.js';
import type { LatestElement, StreamHub } from '../publish/stream-hub.js';
import type { AppContext } from './app-context.js';
import type { LatestOutcome, LatestRequestHeaders, LatestResponder } from './latest-responder.js';
import { SocketAnswers } from './socket-answers.js';

const latestRoute = streamPath(':id', 'latest');

/**
 * A long-poll held on its connection alone: the socket, the stream, and the request headers its
 * answer depends on (a few strings), nothing of Node's request and response.
 */
class HeldLongPoll implements LongPollWaiter {
  constructor(
    readonly socket: Socket,
    readonly connection: HeldConnection,
    readonly hub: StreamHub,
    readonly request: LatestRequestHeaders,
    readonly head: boolean,
    readonly answer: (held: HeldLongPoll, outcome: WaitOutcome) => void,
  ) {}

  settle(outcome: WaitOutcome): void {
    this.answer(this, outcome);
  }
}

/**
 * A connection that has had a long-poll held here, from its first until it closes: what its
 * client acknowledges is watched (`watch`, told of every write to it), and the long-poll it has
 * held now, if any.
 */
export class HeldConnection {
  held: HeldLongPoll | undefined = undefined;
  watch: ProgressWatch = NOT_WATCHED;
}

/**
 * Long-polls held as SSE subscribers are: by their socket alone. A request to hold is ended at
 * once as far as Node's HTTP server knows — its response finished with nothing written, so that
 * Node lets its request and response objects go and takes the connection for idle — and the
 * socket waits with its stream's `LongPollWaiters`. Its answer, when the element comes or the
 * wait ends, is written to the socket whole: status line, headers and body, made once per
 * representation and second and shared by every connection it answers (`SocketAnswers`). Node's
 * parser still reads the connection, and parses the client's next request on it as on any idle
 * keep-alive connection.
 *
 * A connection is watched for what its client acknowledges (`watchProgress`, with the limits
 * of its first stream's `LongPollWaiters.guard`) once, from its first held request until it
 * closes, not once per held request: the monitor then knows it idle between two answers, as an
 * SSE subscriber between two events, and reads the kernel's send queues once after an element's
 * answers rather than at every check while requests are held (smart pollers holding ahead are
 * held most of the time). Every write to such a connection is reported to the monitor, as an SSE
 * subscriber's (`WatchOptions.writesReported`): a held answer here, an answer at once by the
 * fast path or the load shedder, and any other response on it when Node has finished it
 * (`answered`); so a connection found idle is not visited by the checks at all until its next
 * answer, where it was read at every check (for held long-polls, five times per element at one
 * element every five seconds). Over its limits, its held request (if any) is cancelled and the
 * connection reset, as a push connection's.
 *
 * What Node would otherwise do for such a connection is done here: its client going away
 * cancels its wait (no answer, nothing left behind); a request pipelined behind the held one
 * gets the held one answered first (as at the end of its wait), so that answers keep their
 * order; the keep-alive timeout does not end a connection while it is held; at shutdown the
 * answers say `Connection: close` and end their connections. A connection answered by an element
 * is not read again until every request that element releases is answered (their clients'
 * next requests would otherwise be parsed between two batches, ahead of the last answers).
 *
 * Only a response on its own connection, which stays open for a next request, is held so;
 * `hold` returns false for any other (an injected request, `Connection: close`, HTTP/1.0, a
 * pipelined response whose turn has not come), which the caller holds with its response.
 */
export class HeldLongPolls {
  readonly #context: AppContext;
  readonly #responder: LatestResponder;
  readonly #answers: SocketAnswers;
  /** Every connection that has had a long-poll held here, until it closes: one entry each, not one per hold. */
  readonly #connections = new WeakMap<Socket, HeldConnection>();
  readonly #hubsWatched = new WeakSet<StreamHub>();
  /**
   * The last answer made, for the held requests after it that ask the same of the same element
   * in the same millisecond (a release answers thousands alike, dozens per millisecond): the
   * answer is a function of those alone, so the next is that one, not decided again.
   */
  #lastAnswer: { readonly hub: StreamHub; readonly latest: LatestElement | undefined; readonly nowMs: number; readonly request: LatestRequestHeaders; readonly answer: LatestOutcome } | undefined;
  /** Connections answered by a release still under way: not read until it has answered every one. */
  #pausedUntilReleased: Socket[] = [];
  readonly #answer = (held: HeldLongPoll, outcome: WaitOutcome) => this.#answerHeld(held, outcome);

  constructor(context: AppContext, responder: LatestResponder, answers: SocketAnswers) {
    this.#context = context;
    this.#responder = responder;
    this.#answers = answers;
  }

  /**
   * Takes over the server's socket timeouts (`timeout` event): a connection whose long-poll is
   * held here is not idle and is kept; any other is destroyed, as Node does by default.
   */
  attach(server: Server): void {
    server.on('timeout', (socket: Socket) => this.timedOut(socket));
  }

  /** `socket` has been idle past its timeout: destroyed unless its long-poll is held here (see `attach`). */
  timedOut(socket: Socket): void {
    if (!this.isHeld(socket)) socket.destroy();
  }

  /**
   * Holds the long-poll `response` answers on its socket for `seconds`, or until the next
   * element; false when it cannot be held so (see the class), or when its stream holds
   * `maxLongPollWaiters` already; then nothing has been written or held.
   */
  hold(hub: StreamHub, request: LatestRequestHeaders, seconds: number, method: string, response: ServerResponse): boolean {
    const socket = SocketAnswers.connection(response);
    if (socket === undefined || !this.holdOn(socket, hub, request, seconds, method === 'HEAD')) return false;
    // The connection is idle for Node from here on, and the response and request can be collected.
    SocketAnswers.release(response);
    return true;
  }

  /**
   * Holds a long-poll of `socket`'s that no `ServerResponse` stands for (its request was read by
   * `DirectLatestRequests`), as `hold` does; false when its stream holds `maxLongPollWaiters`.
   */
  holdOn(socket: Socket, hub: StreamHub, request: LatestRequestHeaders, seconds: number, head: boolean): boolean {
    const known = this.#connections.get(socket);
    const connection = known ?? new HeldConnection();
    const held = new HeldLongPoll(socket, connection, hub, request, head, this.#answer);
    // Watched by the connection (below), not by each hold.
    if (!hub.waiters.hold(held, seconds * 1000)) return false;
    if (!this.#hubsWatched.has(hub)) {
      this.#hubsWatched.add(hub);
      hub.waiters.onReleased(() => this.#resumeAnswered());
    }
    if (known === undefined) {
      this.#connections.set(socket, connection);
      connection.watch = this.#watchProgress(socket, hub, connection);
      socket.once('close', () => {
        connection.watch.stop();
        this.#closed(connection);
      });
    }
    connection.held = held;
    return true;
  }

  /** Whether `socket` has a long-poll held here now. */
  isHeld(socket: Socket): boolean {
    return this.#connections.get(socket)?.held !== undefined;
  }

  /**
   * Called with every request before it is answered: a request on a connection whose long-poll
   * is held here (a pipelined one) has the held one answered first, as at the end of its wait.
   * Returns the connection when it had a long-poll held here, for `answered`.
   */
  beforeRequest(socket: Socket): HeldConnection | undefined {
    const connection = this.#connections.get(socket);
    if (connection === undefined) return undefined;
    const held = connection.held;
    if (held !== undefined) {
      held.hub.waiters.cancel(held);
      this.#answerHeld(held, 'timeout');
    }
    return connection;
  }

  /**
   * Called once the request that `beforeRequest` returned `connection` for was handed to
   * whatever answers it: its answer's write is reported to the monitor, now if it was answered
   * at once, when Node has finished its response if it is answered later; a request held here
   * is reported when its answer is written.
   */
  answered(connection: HeldConnection, response: ServerResponse): void {
    if (connection.held !== undefined) return;
    if (response.writableEnded) connection.watch.wrote();
    else response.once('finish', connection.watch.wrote);
  }

  /** As `answered`, for a request answered by a write on its socket already (`DirectLatestRequests`). */
  answeredOnSocket(connection: HeldConnection): void {
    if (connection.held === undefined) connection.watch.wrote();
  }

  /** Watches what `socket`'s client acknowledges until it closes, told of every write to it: see the class. */
  #watchProgress(socket: Socket, hub: StreamHub, connection: HeldConnection): ProgressWatch {
    const guard = hub.waiters.guard;
    if (guard === undefined) return NOT_WATCHED;
    return watchProgress(
      socket,
      guard.limits,
      (reason) => {
        const held = connection.held;
        if (held !== undefined) {
          connection.held = undefined;
          held.hub.waiters.cancel(held);
        }
        socket.resetAndDestroy();
        (held?.hub.waiters.guard ?? guard).onEvicted(reason);
      },
      guard.monitor,
      { writesReported: true },
    );
  }

  #resumeAnswered(): void {
    const paused = this.#pausedUntilReleased;
    this.#pausedUntilReleased = [];
    for (const socket of paused) if (!socket.destroyed) socket.resume();
  }

  #closed(connection: HeldConnection): void {
    const held = connection.held;
    if (held === undefined) return;
    connection.held = undefined;
    held.hub.waiters.cancel(held);
  }

  #answerHeld(held: HeldLongPoll, outcome: WaitOutcome): void {
    const { socket, connection } = held;
    // Answered already (a pipelined request came), or the connection went away.
    if (connection.held !== held) return;
    connection.held = undefined;
    if (outcome === 'aborted' || socket.destroyed) return;
    const nowMs = Date.now();
    let answer: LatestOutcome;
    try {
      answer = this.#answerTo(held.hub, held.request, nowMs);
    } catch (error) {
      // Not expected (the request was answerable before it waited): end it rather than leave it hanging.
      this.#context.logger?.error({ err: error }, 'a held long-poll could not be answered');
      socket.destroy();
      return;
    }
    if (answer.kind !== 'send') return;
    const closing = this.#context.lifecycle.closing;
    socket.write(this.#answers.bytes(answer, held.head, closing, nowMs));
    connection.watch.wrote();
    if (closing) socket.end();
    else if (outcome === 'element') {
      // The client's next request waits in the kernel until every held request of this element
      // is answered: read between two batches, the first answered would delay the last.
      socket.pause();
      this.#pausedUntilReleased.push(socket);
    }
    this.#context.metrics.requestAnswered(latestRoute, held.head ? 'HEAD' : 'GET', answer.status);
  }

  /** What the responder answers `request` now (not waiting any more): the last answer again when it asked the same (see `#lastAnswer`). */
  #answerTo(hub: StreamHub, request: LatestRequestHeaders, nowMs: number): LatestOutcome {
    const last = this.#lastAnswer;
    if (last !== undefined && last.nowMs === nowMs && last.hub === hub && last.latest === hub.latest && sameAnswerHeaders(last.request, request)) return last.answer;
    const answer = this.#responder.respond(hub, request, nowMs, false);
    this.#lastAnswer = { hub, latest: hub.latest, nowMs, request, answer };
    return answer;
  }
}

/** Whether two requests ask `/latest` the same, once waiting is over (`Prefer` aside). */
function sameAnswerHeaders(a: LatestRequestHeaders, b: LatestRequestHeaders): boolean {
  return (
    a['if-none-match'] === b['if-none-match'] &&
    a.accept === b.accept &&
    a['accept-encoding'] === b['accept-encoding'] &&
    a.format === b.format &&
    a['if-modified-since'] === b['if-modified-since']
  );
}
