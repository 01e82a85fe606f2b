import type { IncomingMessage, ServerResponse } from 'node:http';
import { idSyntax } from '@rdf-stream/protocol';
import { PublisherError } from '../errors.js';
import type { AppContext } from './app-context.js';
import type { LatestResponder } from './latest-responder.js';

const latestPath = new RegExp(`^/streams/(${idSyntax.stream})/latest(?:\\?(.*))?$`);

/**
 * The polling hot path, answered before Fastify's routing and hooks: a GET or HEAD of
 * `/streams/{id}/latest` that can be answered at once (200 or 304) is written with one
 * `writeHead` and one `end` of pre-built bytes, as a bare `node:http` server would. Anything
 * else — long-polls, errors, load shedding, shutdown — returns false and goes through Fastify,
 * whose route answers from the same `LatestResponder`.
 *
 * Measured: this path is what lets polling reach the throughput of a bare server (docs/bench.md).
 */
export function fastLatestHandler(
  context: AppContext,
  responder: LatestResponder,
  isUnderPressure: () => boolean,
): (request: IncomingMessage, response: ServerResponse) => boolean {
  return (request, response) => {
    const method = request.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const match = latestPath.exec(request.url ?? '');
    if (match === null || context.lifecycle.closing || isUnderPressure()) return false;
    const hub = context.hubs.get(match[1] as string);
    if (hub === undefined) return false;
    const headers = request.headers;
    let outcome;
    try {
      outcome = responder.respond(
        hub,
        {
          accept: headers.accept,
          'accept-encoding': headers['accept-encoding'],
          'if-none-match': headers['if-none-match'],
          'if-modified-since': headers['if-modified-since'],
          prefer: headers.prefer,
          // Only a query string costs a parse; a repeated format counts once, as on Fastify's path.
          format: match[2] === undefined ? undefined : (new URLSearchParams(match[2]).get('format') ?? undefined),
        },
        Date.now(),
      );
    } catch (error) {
      if (error instanceof PublisherError) return false;
      throw error;
    }
    if (outcome.kind !== 'send') return false;
    response.writeHead(outcome.status, outcome.headers);
    response.end(method === 'HEAD' ? undefined : outcome.body);
    context.metrics.requestAnswered('/streams/:id/latest', method, outcome.status);
    return true;
  };
}
