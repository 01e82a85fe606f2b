import type { LatestSession, PollHints } from '@rdf-stream/client';
import type { AnswerBurst } from './answer-burst.js';
import type { PollTrace } from './poll-trace.js';
import type { FleetClient, UpdateRecorder } from './update-recorder.js';

/** What a worker's clients share: where their updates go, what failed, and whether the run is over. */
export interface Fleet {
  /** The updates the clients got, and their latencies (replaced when the job comes). */
  updates: UpdateRecorder;
  /**
   * The worker's burst of answers: a request that follows its answer at once is sent when it
   * ends (`AnswerBurst`); undefined: at once.
   */
  readonly answers?: AnswerBurst;
  readonly counters: { errors: number; timeouts: number; connected: number };
  /** `counters.errors` by cause (`countError`); undefined: not kept. */
  readonly errorCauses?: Map<string, number>;
  /** Set when the benchmark stops the fleet: clients stop asking, failures no longer count. */
  stopping: boolean;
}

/** Where a polling client sends its requests: the part of undici's `request` it uses. */
export interface LatestDispatcher {
  request(options: {
    readonly path: string;
    readonly method: 'GET';
    readonly headers: Record<string, string>;
    readonly headersTimeout: number;
    readonly bodyTimeout: number;
  }): Promise<{
    readonly statusCode: number;
    readonly headers: Readonly<Record<string, string | string[] | undefined>>;
    readonly body: {
      text(): Promise<string>;
      dump(): Promise<unknown>;
      /** The whole body, when the dispatcher has read it already (`LeanHttpConnection`): read without decoding it. */
      readonly received?: Buffer;
    };
  }>;
}

/** One poller or long-poller of `/latest`: the session that decides, and where it asks. */
export interface PollingClientOptions {
  /** Where it asks: a connection pool to the publisher (undici's `Pool`), or a long-poller's own connection (`LeanHttpConnection`). */
  readonly dispatcher: LatestDispatcher;
  /** The path of `/latest`. */
  readonly path: string;
  /** Longest wait for an answer's headers, and for its body (ms); a held request gets `session.holdMs` more. */
  readonly requestTimeoutMs: number;
  readonly session: LatestSession;
  /** The smart strategy's hints: the newest element's generation time is written here. */
  readonly hints?: PollHints;
  /** Where each request's timing goes, when the benchmark traces polls (`POLL_TRACE_ENV`), with this client's number. */
  readonly trace?: { readonly sink: PollTrace; readonly client: number };
}

/**
 * Counts an error of a client under its cause: an error code (`ECONNRESET`, `ETIMEDOUT`, …) or
 * an answer's status and problem code (`HTTP 503 PUB_ERR_OVERLOADED`): a bounded set of names.
 */
export function countError(fleet: Fleet, cause: string): void {
  fleet.counters.errors++;
  const causes = fleet.errorCauses;
  if (causes !== undefined) causes.set(cause, (causes.get(cause) ?? 0) + 1);
}

/** The cause an answer that is not the stream's gives: its status, and the `code` of its problem document when it has one. */
export function answerCause(status: number, body?: string): string {
  let code: unknown;
  try {
    code = body === undefined ? undefined : (JSON.parse(body) as { code?: unknown } | null)?.code;
  } catch {
    // Not a problem document: the status alone.
  }
  // A code as the publisher's are (`PUB_ERR_…`, `stream-not-found`), never free text.
  return typeof code === 'string' && /^[A-Za-z0-9_.:-]{1,64}$/.test(code) ? `HTTP ${status} ${code}` : `HTTP ${status}`;
}

/** Counts a request that failed without an answer (a timeout, a lost connection). */
export function countFailure(fleet: Fleet, error: unknown): void {
  if (fleet.stopping) return;
  const code = (error as NodeJS.ErrnoException).code;
  countError(fleet, typeof code === 'string' ? code : ((error as Error).name ?? 'unknown'));
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'ETIMEDOUT') fleet.counters.timeouts++;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls or long-polls until the fleet stops, as the client library's session (`PollSession`,
 * `LongPollSession`: its cache, schedule and backoff) decides, over undici's `request`, which
 * costs less CPU per request than `fetch` (thousands of clients share the two cores with the
 * publisher). A request the session would send at once after an answer (a long-poller's next)
 * waits for the worker's burst of answers to end (`fleet.answers`). A refusal (4xx) ends the
 * client, as it ends a subscription.
 */
export async function pollingClient(fleet: Fleet, client: FleetClient, options: PollingClientOptions): Promise<void> {
  const { session } = options;
  fleet.counters.connected++;
  while (!fleet.stopping) {
    const waitMs = await ask(fleet, client, options);
    if (waitMs === undefined) return;
    if (waitMs > 0) await pause(waitMs);
    else await fleet.answers?.ended();
    while (session.fresh && !fleet.stopping) await pause(session.nextDelay(Date.now()));
  }
}

/**
 * One request and what its answer means: the wait before the next request, or `undefined` when
 * the publisher refused the client. A function of its own so that nothing of the answer (undici's
 * body stream, its listeners, the text, the headers) stays reachable from a poller while it
 * waits: a suspended async function keeps its locals, and 8 000 pollers each keeping their last
 * answer for the seconds their cached copy stays fresh made every scavenge copy and promote
 * them (the fleet's garbage collection cost half as much again as the hand-written clients').
 */
async function ask(fleet: Fleet, client: FleetClient, options: PollingClientOptions): Promise<number | undefined> {
  const { session, hints, trace } = options;
  const sentAtMs = Date.now();
  const knownGeneratedAtMs = hints?.generatedAtMs ?? Number.NaN;
  let inFlight = fleet.answers !== undefined;
  fleet.answers?.sent();
  try {
    // A request the publisher may hold gets that much longer.
    const timeoutMs = options.requestTimeoutMs + session.holdMs;
    const response = await options.dispatcher.request({
      path: options.path,
      method: 'GET',
      headers: session.requesting(),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    inFlight = false;
    fleet.answers?.answered();
    const answer = session.answered(response.statusCode, response.headers);
    // The first answer is the state the client found, not an update (its element may have been generated the same millisecond).
    const first = client.connectedAt === undefined;
    if (answer.kind === 'element' || answer.kind === 'unchanged') client.connectedAt ??= Date.now();
    let answerGeneratedAtMs = Number.NaN;
    // The body of a refusal or a "retry later" is read for its cause (a problem document).
    let problem: string | undefined;
    if (answer.kind === 'element') {
      const { body } = response;
      const received = body.received ?? (await body.text());
      const stamp = first ? fleet.updates.found(client, received) : fleet.updates.record(client, received, Date.now());
      if (hints !== undefined && stamp !== undefined) hints.generatedAtMs = stamp.generatedAtMs;
      answerGeneratedAtMs = stamp?.generatedAtMs ?? Number.NaN;
    } else if (answer.kind === 'refused' || answer.kind === 'retry') problem = await response.body.text();
    else await response.body.dump();
    trace?.sink.record(trace.client, sentAtMs, Date.now(), response.statusCode, answer.kind === 'element', knownGeneratedAtMs, answerGeneratedAtMs);
    if (answer.kind === 'refused') {
      countError(fleet, answerCause(response.statusCode, problem));
      return undefined;
    }
    if (answer.kind === 'retry') {
      countError(fleet, answerCause(response.statusCode, problem));
      return session.failed(answer.retryAfterMs);
    }
    return session.nextDelay(Date.now());
  } catch (error) {
    if (inFlight) fleet.answers?.answered();
    countFailure(fleet, error);
    return session.failed();
  }
}
