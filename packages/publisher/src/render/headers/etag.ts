import { type FormatName, opaqueTag } from '@rdf-stream/protocol';
import type { Encoding } from '../compress.js';

/**
 * A strong ETag for one representation of one element: `"{epoch}-{seq}-{format}[-{encoding}]"`.
 * The epoch changes when the publisher's log starts afresh, so that a validator from before a
 * restart (with sequence numbers starting again) can never match a different element.
 */
export function entityTag(epoch: string, seq: number, format: FormatName, encoding: Encoding = 'identity'): string {
  return `"${epoch}-${seq}-${format}${encoding === 'identity' ? '' : `-${encoding}`}"`;
}

/**
 * RFC 9110 §13.1.2: If-None-Match uses the weak comparison, and a representation in another
 * content coding of the same element is still "the same" for revalidation purposes. True when
 * any tag in the header names this element and format, or the header is `*`.
 */
export function ifNoneMatchHits(header: string | undefined, epoch: string, seq: number, format: FormatName): boolean {
  if (header === undefined || header === '') return false;
  if (header.trim() === '*') return true;
  const prefix = `"${epoch}-${seq}-${format}`;
  for (const raw of header.split(',')) {
    const tag = opaqueTag(raw);
    if (tag === `${prefix}"` || (tag.startsWith(`${prefix}-`) && tag.endsWith('"'))) return true;
  }
  return false;
}

/**
 * RFC 9110 §13.1.2: whether If-None-Match names `etag` (weak comparison) or is `*`; for
 * documents with one strong tag per representation (descriptors, history pages).
 */
export function ifNoneMatchIncludes(header: string | undefined, etag: string): boolean {
  if (header === undefined || header === '') return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => opaqueTag(tag) === etag);
}

/**
 * RFC 9110 §13.1.3: If-Modified-Since names a date no earlier than the representation's
 * Last-Modified (whole seconds, as HTTP dates have). Only consulted when the request has no
 * If-None-Match (§13.2.2), which the caller checks.
 */
export function ifModifiedSinceHits(header: string | undefined, lastModifiedMs: number): boolean {
  if (header === undefined || header === '') return false;
  const sinceMs = Date.parse(header);
  return !Number.isNaN(sinceMs) && sinceMs >= Math.floor(lastModifiedMs / 1000) * 1000;
}

/**
 * Whether a request's validators say it has element `seq` in `format` already: If-None-Match
 * when present (`ifNoneMatchHits`), else If-Modified-Since against `lastModifiedMs` (RFC 9110
 * §13.2.2 evaluates the second only without the first).
 */
export function elementNotModified(
  headers: { readonly 'if-none-match'?: string | undefined; readonly 'if-modified-since'?: string | undefined },
  epoch: string,
  seq: number,
  format: FormatName,
  lastModifiedMs: number,
): boolean {
  const ifNoneMatch = headers['if-none-match'];
  return ifNoneMatch === undefined || ifNoneMatch === ''
    ? ifModifiedSinceHits(headers['if-modified-since'], lastModifiedMs)
    : ifNoneMatchHits(ifNoneMatch, epoch, seq, format);
}

/**
 * A strong ETag for a file served in several content codings: `"{tag}"` for the identity body,
 * `"{tag}-br"`, `"{tag}-gzip"` for the others (as `entityTag` does for elements).
 */
export function codedEntityTag(tag: string, encoding: Encoding): string {
  return `"${tag}${encoding === 'identity' ? '' : `-${encoding}`}"`;
}

/**
 * RFC 9110 §13.1.2 for a file with `codedEntityTag`s: whether If-None-Match names the file in
 * any of its codings (weak comparison: a cache holding the gzip body may revalidate for brotli),
 * or is `*`.
 */
export function ifNoneMatchNamesFile(header: string | undefined, tag: string): boolean {
  if (header === undefined || header === '') return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((raw) => {
    const candidate = opaqueTag(raw);
    return candidate === `"${tag}"` || (candidate.startsWith(`"${tag}-`) && candidate.endsWith('"'));
  });
}
