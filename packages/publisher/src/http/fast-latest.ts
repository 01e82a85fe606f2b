import type { IncomingMessage, ServerResponse } from 'node:http';
import { streamPath, streamPathPattern } from '@rdf-stream/protocol';
import { PublisherError } from '../errors.js';
import type { AppContext } from './app-context.js';
import type { HeldLongPolls } from './held-long-polls.js';
import type { WaitOutcome } from '../publish/latest/long-poll-waiters.js';
import type { StreamHub } from '../publish/stream-hub.js';
import type { LatestOutcome, LatestRequestHeaders, LatestResponder } from './latest-responder.js';
import type { SocketAnswers } from './socket-answers.js';

const latestPath = streamPathPattern('latest');
const latestRoute = streamPath(':id', 'latest');

/**
 * The polling hot path, answered before Fastify's routing and hooks: a GET or HEAD of
 * `/streams/{id}/latest` that can be answered at once (200 or 304) is written whole on its
 * socket, one `write` of a response made once per representation and second (`SocketAnswers`),
 * or, where it cannot be (see there), with one `writeHead` and one `end` of pre-built bytes, as
 * a bare `node:http` server would; so is a
 * long-poll (`Prefer: wait`), held until the next element or the end of its wait, when the
 * stream holds fewer than `maxLongPollWaiters`: by its socket alone (`HeldLongPolls`) when it
 * can be, else with its response. Anything else — errors, the long-poll limit, load shedding,
 * shutdown — returns false and goes through Fastify, whose route answers from the same
 * `LatestResponder`.
 *
 * Measured: this path is what lets polling reach the throughput of a bare server, and
 * long-polls released by an element cost a write each of a response made once (docs/bench-results.md).
 */
export function fastLatestHandler(
  context: AppContext,
  responder: LatestResponder,
  isUnderPressure: () => boolean,
  heldLongPolls: HeldLongPolls,
  socketAnswers: SocketAnswers,
): (request: IncomingMessage, response: ServerResponse) => boolean {
  return (request, response) => {
    const method = request.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const match = latestPath.exec(request.url ?? '');
    if (match === null || context.lifecycle.closing || isUnderPressure()) return false;
    const hub = context.hubs.get(match[1] as string);
    if (hub === undefined) return false;
    const headers = request.headers;
    const latestRequest: LatestRequestHeaders = {
      accept: headers.accept,
      'accept-encoding': headers['accept-encoding'],
      'if-none-match': headers['if-none-match'],
      'if-modified-since': headers['if-modified-since'],
      prefer: headers.prefer,
      format: formatOfQuery(match[2]),
    };
    const nowMs = Date.now();
    const outcome = fastOutcome(responder, hub, latestRequest, nowMs);
    if (outcome === undefined) return false;
    if (outcome.kind === 'send') {
      answer(context, method, response, outcome, socketAnswers, nowMs);
      return true;
    }
    if (heldLongPolls.hold(hub, latestRequest, outcome.seconds, method, response)) return true;
    holdUntilNext(hub, outcome.seconds, response)
      .then((held) => held === 'aborted' || answer(context, method, response, responder.respond(hub, latestRequest, Date.now(), false)))
      .catch((error: unknown) => {
        // Not expected (the request was answerable before it waited): end it rather than leave it hanging.
        context.logger?.error({ err: error }, 'a held long-poll could not be answered');
        response.destroy();
      });
    return true;
  };
}

/** `?format=` of `/latest`'s query string: only a query string costs a parse; a repeated format counts once, as on Fastify's path. */
export function formatOfQuery(query: string | undefined): string | undefined {
  return query === undefined ? undefined : (new URLSearchParams(query).get('format') ?? undefined);
}

/**
 * What `/latest` answers `request` now on the hot path (an answer to send, or a long-poll to
 * hold), or undefined when the Fastify route must answer it: an error (`PublisherError`), or a
 * long-poll when its stream already holds `maxLongPollWaiters`.
 */
export function fastOutcome(responder: LatestResponder, hub: StreamHub, request: LatestRequestHeaders, nowMs: number): LatestOutcome | undefined {
  let outcome;
  try {
    outcome = responder.respond(hub, request, nowMs);
  } catch (error) {
    if (error instanceof PublisherError) return undefined;
    throw error;
  }
  if (outcome.kind !== 'send' && hub.waiters.size >= hub.waiters.maxWaiters) return undefined;
  return outcome;
}

/**
 * Sends `outcome`: written whole on the socket by `socketAnswers` where it is given and can be
 * (see there), else with one `writeHead` and one `end`; counted either way.
 */
function answer(context: AppContext, method: string, response: ServerResponse, outcome: LatestOutcome, socketAnswers?: SocketAnswers, nowMs = Date.now()): void {
  if (outcome.kind !== 'send') throw new Error('a long-poll must be resolved before sending');
  if (socketAnswers?.answer(response, outcome, method === 'HEAD', nowMs) !== true) {
    response.writeHead(outcome.status, outcome.headers);
    response.end(method === 'HEAD' ? undefined : outcome.body);
  }
  context.metrics.requestAnswered(latestRoute, method, outcome.status);
}

/**
 * Holds a long-poll until the next element, the end of its wait, or its connection's end
 * ('aborted': its client closed it, or it was cut for not acknowledging what it was sent). Rejects with `TooManyWaitersError` when the stream holds `maxLongPollWaiters`.
 */
export async function holdUntilNext(hub: StreamHub, seconds: number, response: ServerResponse): Promise<WaitOutcome> {
  const abort = new AbortController();
  const onClose = () => abort.abort();
  response.once('close', onClose);
  try {
    // The request's socket: a pipelined request's response gets it only once those before it are sent.
    return await hub.waiters.wait(seconds * 1000, abort.signal, response.req.socket);
  } finally {
    response.off('close', onClose);
  }
}
