import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FormatName } from '@rdf-stream/protocol';
import { contentType } from '../render/output-formats.js';
import type { NegotiationCache } from '../render/headers/negotiate.js';
import type { StaticDocument } from '../render/static-document.js';
import { ifNoneMatchIncludes } from '../render/headers/etag.js';
import { formatParamOf, requestedFormat } from '../render/headers/requested-format.js';

/** `requestedFormat` of a Fastify request (`?format=`, first value when repeated, else Accept). */
export function negotiatedFormat(request: FastifyRequest, negotiation: NegotiationCache): FormatName {
  return requestedFormat(formatParamOf(request.query), request.headers.accept, negotiation);
}

/**
 * Answers with a document rendered at start-up, revalidated by its ETag; `headers` are added
 * (and may replace the default `Cache-Control`).
 */
export function sendStaticDocument(
  request: FastifyRequest,
  reply: FastifyReply,
  document: StaticDocument,
  negotiation: NegotiationCache,
  headers: Readonly<Record<string, string>> = {},
): FastifyReply {
  const format = negotiatedFormat(request, negotiation);
  const etag = document.etags[format];
  reply.headers({ 'cache-control': 'public, max-age=60', ...headers, etag, vary: 'Accept' });
  if (ifNoneMatchIncludes(request.headers['if-none-match'], etag)) {
    return reply.code(304).send();
  }
  return reply.header('content-type', contentType(format)).send(document.bodies[format]);
}
