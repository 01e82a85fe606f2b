import type { FastifyReply, FastifyRequest } from 'fastify';
import { PublisherError } from '../errors.js';
import { contentType, type FormatName, formatNames, formats } from '../render/formats.js';
import type { NegotiationCache } from '../render/negotiate.js';
import type { StaticDocument } from '../render/static-document.js';
import { ifNoneMatchIncludes } from '../render/etag.js';

export const acceptableTypes = [...formatNames.map((format) => formats[format].mediaType), 'application/json'];

/** The format for this request's Accept header, or a 406 problem. */
export function negotiatedFormat(request: FastifyRequest, negotiation: NegotiationCache): FormatName {
  const format = negotiation.format(request.headers.accept);
  if (format === undefined) {
    throw new PublisherError(
      'PUB_ERR_NOT_ACCEPTABLE',
      `Acceptable media types: ${acceptableTypes.join(', ')}`,
      { acceptable: acceptableTypes },
    );
  }
  return format;
}

/** Answers with a document rendered at start-up, revalidated by its ETag. */
export function sendStaticDocument(
  request: FastifyRequest,
  reply: FastifyReply,
  document: StaticDocument,
  negotiation: NegotiationCache,
  headers: Readonly<Record<string, string>> = {},
): FastifyReply {
  const format = negotiatedFormat(request, negotiation);
  const etag = document.etags[format];
  reply.headers({ ...headers, etag, vary: 'Accept', 'cache-control': 'public, max-age=60' });
  if (ifNoneMatchIncludes(request.headers['if-none-match'], etag)) {
    return reply.code(304).send();
  }
  return reply.header('content-type', contentType(format)).send(document.bodies[format]);
}
