import type { FastifyInstance, FastifyReply } from 'fastify';
import { PublisherError } from '../../errors.js';
import { TooManyWaitersError } from '../../publish/latest/long-poll-waiters.js';
import type { StreamHub } from '../../publish/stream-hub.js';
import { type AppContext, hubOf } from '../app-context.js';
import type { LatestOutcome, LatestResponder } from '../latest-responder.js';
import { holdUntilNext } from '../fast-latest.js';
import { formatParamOf } from '../../render/headers/requested-format.js';

/**
 * `GET /streams/:id/latest` through Fastify: the requests the fast path (`fast-latest.ts`)
 * leaves to it — long-polls, errors, and everything while shedding or closing. Both answer
 * through the same `LatestResponder`.
 */
export function latestRoute(app: FastifyInstance, context: AppContext, responder: LatestResponder): void {
  app.get<{ Params: { id: string } }>('/streams/:id/latest', async (request, reply) => {
    const hub = hubOf(context, request.params.id);
    const headers = { ...request.headers, format: formatParamOf(request.query) };
    let outcome = responder.respond(hub, headers, Date.now(), !context.lifecycle.closing);
    if (outcome.kind === 'wait') {
      if ((await waitForNext(hub, outcome.seconds, reply)) === 'aborted') return reply;
      outcome = responder.respond(hub, headers, Date.now(), false);
    }
    return send(reply, outcome);
  });
}

function send(reply: FastifyReply, outcome: LatestOutcome): FastifyReply {
  if (outcome.kind !== 'send') throw new Error('a long-poll must be resolved before sending');
  return reply.code(outcome.status).headers(outcome.headers).send(outcome.body);
}

async function waitForNext(hub: StreamHub, seconds: number, reply: FastifyReply) {
  try {
    return await holdUntilNext(hub, seconds, reply.raw);
  } catch (error) {
    if (error instanceof TooManyWaitersError) {
      throw new PublisherError('PUB_ERR_LONG_POLL_LIMIT', error.message, {}, { 'retry-after': '1' });
    }
    throw error;
  }
}
