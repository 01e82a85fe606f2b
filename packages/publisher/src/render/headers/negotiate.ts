import { LRUCache } from 'lru-cache';
import Negotiator from 'negotiator';
import { type FormatName, formatNames, mediaTypeAliases, mediaTypes } from '@rdf-stream/protocol';
import { PublisherError } from '../../errors.js';
import { type Encoding, encodings } from '../compress.js';
import { type SseEncoding, sseEncodings } from '../event-stream-encoder.js';
import { parseAccept, preferredMediaType } from './media-range.js';

/** Media types we answer, best default first, then their aliases (`application/json` gets JSON-LD). */
const offered: ReadonlyArray<readonly [string, FormatName]> = [
  ...formatNames.map((format) => [mediaTypes[format], format] as const),
  ...Object.entries(mediaTypeAliases),
];
const offeredTypes = offered.map(([mediaType]) => mediaType);

/**
 * The format to send for an `Accept` header (RFC 9110 §12.5.1), or `undefined` when none is
 * acceptable (406). A missing or empty header means anything, and anything means Turtle.
 * Parameters other than `q` and `charset` do not change the answer: JSON-LD 1.1 lets a server
 * answer compacted JSON-LD to any `profile`, and no other format has a parameter we serve by.
 * A `charset` other than UTF-8 (all we send) makes its range match nothing (`media-range.ts`).
 */
export function negotiateFormat(accept: string | undefined): FormatName | undefined {
  if (accept === undefined || accept.trim() === '') return 'turtle';
  const best = preferredMediaType(parseAccept(accept), offeredTypes);
  return best === undefined ? undefined : offered.find(([mediaType]) => mediaType === best)?.[1];
}

/**
 * The content coding to send for an `Accept-Encoding` header: among those the client rates
 * equally, br (smallest) before gzip; identity when nothing else is accepted, unless refused.
 */
export function negotiateEncoding(acceptEncoding: string | undefined): Encoding | undefined {
  return negotiateAmong(acceptEncoding, encodings);
}

/**
 * The coding of an event stream for an `Accept-Encoding` header: gzip (each event compressed once)
 * when the client takes it at least as well as identity, identity otherwise, `undefined` when
 * the client refuses both (406). Brotli has no series of independent members to offer.
 */
export function negotiateSseEncoding(acceptEncoding: string | undefined): SseEncoding | undefined {
  return negotiateAmong(acceptEncoding, sseEncodings);
}

function negotiateAmong<T extends string>(acceptEncoding: string | undefined, available: readonly T[]): T | undefined {
  if (acceptEncoding === undefined || acceptEncoding.trim() === '') return 'identity' as T;
  const negotiator = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } });
  // negotiator ≥ 1.0 takes the server's preference order for ties (not yet in @types/negotiator).
  const byPreference = negotiator.encodings as (available: string[], options: { preferred: string[] }) => string[];
  const [best] = byPreference.call(negotiator, [...available], { preferred: [...available] });
  return best as T | undefined;
}

/** The 406 for a document (`/latest`, history) whose every coding the request refuses. */
export const documentCodingsNotAcceptable = (): PublisherError =>
  new PublisherError('PUB_ERR_NOT_ACCEPTABLE', `Acceptable content codings: ${encodings.join(', ')}`, { acceptable: [...encodings] });

/** Whether `Accept-Encoding` allows an uncompressed body (RFC 9110 §12.5.3: unless refused). */
export function acceptsIdentity(acceptEncoding: string | undefined): boolean {
  if (acceptEncoding === undefined || acceptEncoding.trim() === '') return true;
  return new Negotiator({ headers: { 'accept-encoding': acceptEncoding } }).encodings(['identity']).length > 0;
}

/**
 * Memoises negotiation per distinct header value: clients send few distinct values, and the
 * header's parsing would otherwise run on every poll. At most `maxEntries` values are kept.
 */
export class NegotiationCache {
  readonly #formats: LRUCache<string, FormatName | 'none'> | undefined;
  readonly #encodings: LRUCache<string, Encoding | 'none'> | undefined;
  readonly #sseEncodings: LRUCache<string, SseEncoding | 'none'> | undefined;

  constructor(maxEntries: number) {
    if (maxEntries > 0) {
      this.#formats = new LRUCache({ max: maxEntries });
      this.#encodings = new LRUCache({ max: maxEntries });
      this.#sseEncodings = new LRUCache({ max: maxEntries });
    }
  }

  /** Header values currently memoised (formats, encodings, event-stream encodings), at most 3 × `maxEntries`. */
  get size(): number {
    return (this.#formats?.size ?? 0) + (this.#encodings?.size ?? 0) + (this.#sseEncodings?.size ?? 0);
  }

  format(accept: string | undefined): FormatName | undefined {
    return memo(this.#formats, accept, negotiateFormat);
  }

  encoding(acceptEncoding: string | undefined): Encoding | undefined {
    return memo(this.#encodings, acceptEncoding, negotiateEncoding);
  }

  sseEncoding(acceptEncoding: string | undefined): SseEncoding | undefined {
    return memo(this.#sseEncodings, acceptEncoding, negotiateSseEncoding);
  }
}

function memo<T extends string>(
  cache: LRUCache<string, T | 'none'> | undefined,
  header: string | undefined,
  negotiate: (header: string | undefined) => T | undefined,
): T | undefined {
  if (cache === undefined || header === undefined) return negotiate(header);
  const hit = cache.get(header);
  if (hit !== undefined) return hit === 'none' ? undefined : hit;
  const result = negotiate(header);
  cache.set(header, result ?? 'none');
  return result;
}
