import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import contentType from 'content-type';
import { mediaTypes } from '@rdf-stream/protocol';
import { echoed, PublisherError } from '../../errors.js';
import type { InputFormat } from '../../model/input-formats.js';
import { splitOutsideQuotes } from '../../render/headers/media-range.js';

/** Accepted request media types (compared case-insensitively, as RFC 9110 requires). */
const inputFormats: Readonly<Record<string, InputFormat>> = Object.fromEntries(
  Object.entries(mediaTypes).map(([format, mediaType]) => [mediaType, format as InputFormat]),
);
const ACCEPT_POST = Object.keys(inputFormats).join(', ');
const decoders = { gzip: createGunzip, 'x-gzip': createGunzip, br: createBrotliDecompress, deflate: createInflate } as const;

export type BodyDecoder = (typeof decoders)[keyof typeof decoders] | undefined;

const unsupported = (detail: string) =>
  new PublisherError('PUB_ERR_UNSUPPORTED_MEDIA_TYPE', detail, { accepted: Object.keys(inputFormats) }, { 'accept-post': ACCEPT_POST });

/**
 * The request's format. Only the exact grammar of RFC 9110 is accepted — one media type, with at
 * most `charset=utf-8` (and `profile` for JSON-LD) as parameters, each once — so that a body
 * cannot be smuggled past the parser under a look-alike type (content-type keeps the last of
 * two equal names: `charset=latin1; charset=utf-8` would read as UTF-8).
 */
export function formatOf(header: string | undefined): InputFormat {
  if (header === undefined || header.trim() === '') throw unsupported('A Content-Type is required');
  let parsed: contentType.ParsedMediaType;
  try {
    parsed = contentType.parse(header);
  } catch {
    throw unsupported(`Malformed Content-Type: ${JSON.stringify(echoed(header))}`);
  }
  const format = Object.hasOwn(inputFormats, parsed.type) ? inputFormats[parsed.type] : undefined;
  if (format === undefined) throw unsupported(`Content-Type ${echoed(parsed.type)} is not accepted`);
  if (parameterCount(header) !== Object.keys(parsed.parameters).length) throw unsupported('A Content-Type parameter is repeated');
  for (const [name, value] of Object.entries(parsed.parameters)) {
    if (name === 'charset' && /^utf-?8$/i.test(value)) continue;
    if (name === 'profile' && format === 'jsonld') continue;
    throw unsupported(`Content-Type parameter ${echoed(`${name}=${value}`)} is not accepted (UTF-8 only)`);
  }
  return format;
}

/** The parameters of a Content-Type that content-type parsed: one per `;` outside a quoted string. */
function parameterCount(header: string): number {
  return splitOutsideQuotes(header, ';').length - 1;
}

/** The decompressor of the request's Content-Encoding (undefined for identity), or a 415. */
export function decoderOf(header: string | undefined): BodyDecoder {
  const coding = (header ?? 'identity').trim().toLowerCase();
  if (coding === 'identity' || coding === '') return undefined;
  if (Object.hasOwn(decoders, coding)) return decoders[coding as keyof typeof decoders];
  throw unsupported(`Content-Encoding ${JSON.stringify(echoed(header ?? ''))} is not supported (gzip, br, deflate)`);
}

export const tooLarge = (limit: number) => new PublisherError('PUB_ERR_BODY_TOO_LARGE', `The body exceeds ${limit} bytes`, { limitBytes: limit });

/**
 * Reads the body, decompressing it, and stops as soon as `limit` bytes (after decompression) are
 * exceeded. The request itself is left open when it stops early (destroying it would destroy the
 * socket before the answer is written): the rest is the refusal's to discard.
 */
export async function readBody(raw: Readable, decoder: BodyDecoder, limit: number): Promise<Buffer> {
  const stream = decoder === undefined ? raw : raw.pipe(decoder());
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream.iterator({ destroyOnReturn: stream !== raw }) as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw tooLarge(limit);
      chunks.push(chunk);
    }
  } catch (error) {
    if (stream !== raw) stream.destroy();
    if (error instanceof PublisherError) throw error;
    // zlib's and the socket's messages describe their own state, not the request: not echoed.
    const what = decoder === undefined ? 'read' : 'decompressed with its Content-Encoding';
    throw new PublisherError('PUB_ERR_BAD_REQUEST', `The body could not be ${what}`);
  }
  return Buffer.concat(chunks, size);
}
