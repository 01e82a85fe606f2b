import { constants, crc32, inflateRawSync } from 'node:zlib';

/** Distinct pieces a worker keeps inflated (the elements and heartbeats of the last minutes). */
export const MAX_CACHED_GZIP_PIECES = 256;

/**
 * The text of each distinct piece of a gzip event stream, inflated once per worker process.
 * The publisher compresses an event once and writes the same bytes to every gzip subscriber, so
 * thousands of clients of one worker receive the same piece: the first one met is inflated
 * (alone: each piece is a DEFLATE stream of its own), the others are found by their CRC-32 and
 * length. A (CRC, length) collision between two different pieces would give one the other's
 * text; the sample clients, which inflate their whole stream, would see it as a mismatch.
 */
export class GzipFragmentTexts {
  /** Pieces inflated so far (each distinct piece once, unless it was evicted). */
  inflated = 0;
  readonly #texts = new Map<number, { readonly length: number; readonly text: string }>();

  text(piece: Buffer): string {
    const key = crc32(piece);
    const known = this.#texts.get(key);
    if (known !== undefined && known.length === piece.length) return known.text;
    const text = inflateRawSync(piece, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8');
    this.inflated++;
    if (this.#texts.size >= MAX_CACHED_GZIP_PIECES) this.#texts.delete(this.#texts.keys().next().value!);
    this.#texts.set(key, { length: piece.length, text });
    return text;
  }
}
