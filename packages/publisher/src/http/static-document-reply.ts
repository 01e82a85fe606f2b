import type { FastifyReply, FastifyRequest } from 'fastify';
import { type FormatName, formatNames, isFormatName, mediaTypeAliases, mediaTypes } from '@rdf-stream/protocol';
import { PublisherError } from '../errors.js';
import { contentType } from '../render/output-formats.js';
import type { NegotiationCache } from '../render/headers/negotiate.js';
import type { StaticDocument } from '../render/static-document.js';
import { ifNoneMatchIncludes } from '../render/headers/etag.js';

export const acceptableTypes = [...formatNames.map((format) => mediaTypes[format]), ...Object.keys(mediaTypeAliases)];

/**
 * The format a request asks for: `?format=` when given (400 for an unknown name), else its
 * Accept header (406 when nothing offered is acceptable). The same rule on every RDF route.
 */
export function requestedFormat(formatParam: string | undefined, accept: string | undefined, negotiation: NegotiationCache): FormatName {
  if (formatParam !== undefined) {
    if (isFormatName(formatParam)) return formatParam;
    throw new PublisherError('PUB_ERR_UNKNOWN_FORMAT', `format must be one of ${formatNames.join(', ')}`, { formats: formatNames });
  }
  const format = negotiation.format(accept);
  if (format === undefined) {
    throw new PublisherError(
      'PUB_ERR_NOT_ACCEPTABLE',
      // A range naming another charset matches nothing (docs/protocol.md): say why it was refused.
      `Acceptable media types: ${acceptableTypes.join(', ')} (in UTF-8 only; parameters other than q and charset are ignored)`,
      { acceptable: acceptableTypes },
    );
  }
  return format;
}

/** `requestedFormat` of a Fastify request (`?format=`, first value when repeated, else Accept). */
export function negotiatedFormat(request: FastifyRequest, negotiation: NegotiationCache): FormatName {
  return requestedFormat(formatParamOf(request.query), request.headers.accept, negotiation);
}

/** The `format` query parameter, the first one when repeated. */
export function formatParamOf(query: unknown): string | undefined {
  const value = (query as { format?: string | string[] } | undefined)?.format;
  return Array.isArray(value) ? value[0] : value;
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
