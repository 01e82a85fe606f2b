import { type FormatName, formatNames, isFormatName, mediaTypeAliases, mediaTypes } from '@rdf-stream/protocol';
import { PublisherError } from '../../errors.js';
import type { NegotiationCache } from './negotiate.js';

/** The media types an RDF route offers, aliases included (named when nothing acceptable was asked for). */
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

/** The `format` query parameter, the first one when repeated. */
export function formatParamOf(query: unknown): string | undefined {
  const value = (query as { format?: string | string[] } | undefined)?.format;
  return Array.isArray(value) ? value[0] : value;
}
