/**
 * Finds the events of a gzip event stream in its compressed bytes, without inflating them.
 *
 * The publisher compresses each SSE message on its own (a fresh DEFLATE state) and ends it with
 * a sync flush: an empty stored block whose last four bytes are LEN = 0x0000 and NLEN = 0xffff,
 * on a byte boundary. So every message ends with `00 00 ff ff`, and the bytes since the previous
 * message are a DEFLATE stream of their own that inflates alone. Those four bytes can also occur
 * inside compressed data: a piece cut there is not a whole message, which `GzipEventReader`
 * detects (its text does not end an event) and joins to the next.
 */

/** The last four bytes of a sync flush (RFC 1951 §3.2.4: an empty stored block, LEN 0, NLEN 0xffff). */
export const SYNC_FLUSH_MARKER: readonly number[] = [0x00, 0x00, 0xff, 0xff];

const FTEXT_HCRC = 0x02;
const FEXTRA = 0x04;
const FNAME = 0x08;
const FCOMMENT = 0x10;

/**
 * The length of the gzip member header (RFC 1952 §2.3) at the start of `bytes`, or undefined
 * when `bytes` does not hold all of it yet. Throws when `bytes` is not a gzip stream.
 */
export function gzipHeaderLength(bytes: Buffer): number | undefined {
  if (bytes.length >= 1 && bytes[0] !== 0x1f) throw new Error('not a gzip stream (bad magic)');
  if (bytes.length >= 2 && bytes[1] !== 0x8b) throw new Error('not a gzip stream (bad magic)');
  if (bytes.length >= 3 && bytes[2] !== 0x08) throw new Error('not a DEFLATE gzip stream');
  if (bytes.length < 10) return undefined;
  const flags = bytes[3]!;
  let offset = 10;
  if (flags & FEXTRA) {
    if (bytes.length < offset + 2) return undefined;
    offset += 2 + bytes.readUInt16LE(offset);
  }
  for (const flag of [FNAME, FCOMMENT]) {
    if (!(flags & flag)) continue;
    const end = bytes.indexOf(0, offset);
    if (end < 0) return undefined;
    offset = end + 1;
  }
  if (flags & FTEXT_HCRC) offset += 2;
  return offset <= bytes.length ? offset : undefined;
}

const MARKER = Buffer.from(SYNC_FLUSH_MARKER);
const NONE: readonly Buffer[] = Object.freeze([]);

/**
 * Cuts a gzip event stream's body, as it arrives, into its messages' DEFLATE pieces: after
 * every `00 00 ff ff`, wherever the chunks of the body begin and end (several messages in one
 * chunk, a marker across two), so that the pieces depend on the bytes only.
 */
export class GzipEventSplitter {
  /** Bytes of a header not yet complete; undefined once the header is behind. */
  #header: Buffer | undefined = Buffer.alloc(0);
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  /** The next bytes of the body: the pieces they complete (every byte since the previous piece, header excluded). */
  push(chunk: Buffer): readonly Buffer[] {
    let bytes = chunk;
    if (this.#header !== undefined) {
      const head = this.#header.length === 0 ? chunk : Buffer.concat([this.#header, chunk]);
      const length = gzipHeaderLength(head);
      if (length === undefined) {
        this.#header = head;
        return NONE;
      }
      this.#header = undefined;
      bytes = head.subarray(length);
    }
    let pieces: Buffer[] | undefined;
    let from = 0;
    // A marker begun at the end of the pending bytes and ended in this chunk.
    for (let inChunk = 1; inChunk < MARKER.length && this.#pendingBytes >= MARKER.length - inChunk && bytes.length >= inChunk; inChunk++) {
      if (this.#pendingEndsWith(MARKER.length - inChunk) && bytes.subarray(0, inChunk).equals(MARKER.subarray(MARKER.length - inChunk))) {
        (pieces ??= []).push(this.#take(bytes.subarray(0, inChunk)));
        from = inChunk;
        break;
      }
    }
    for (let at = bytes.indexOf(MARKER, from); at >= 0; at = bytes.indexOf(MARKER, from)) {
      (pieces ??= []).push(this.#take(bytes.subarray(from, at + MARKER.length)));
      from = at + MARKER.length;
    }
    if (from < bytes.length) {
      this.#pending.push(from === 0 ? bytes : bytes.subarray(from));
      this.#pendingBytes += bytes.length - from;
    }
    return pieces ?? NONE;
  }

  /** Whether the pending bytes end with the first `count` bytes of the marker. */
  #pendingEndsWith(count: number): boolean {
    let piece = this.#pending.length - 1;
    let index = this.#pending[piece]!.length;
    for (let back = count - 1; back >= 0; back--) {
      while (index === 0) index = this.#pending[--piece]!.length;
      if (this.#pending[piece]![--index] !== MARKER[back]) return false;
    }
    return true;
  }

  /** The pending bytes and `last`, as one piece; nothing is pending after. */
  #take(last: Buffer): Buffer {
    if (this.#pendingBytes === 0) return last;
    const piece = Buffer.concat([...this.#pending, last], this.#pendingBytes + last.length);
    this.#pending = [];
    this.#pendingBytes = 0;
    return piece;
  }
}
