import { constants, crc32, deflateRawSync } from 'node:zlib';

/**
 * One gzip stream (RFC 1952) shared, piece by piece, by many event streams: each piece (an
 * event) is compressed on its own — a fresh DEFLATE state, ended by a sync flush on a byte
 * boundary, never a final block — so that pieces can be concatenated in any order after a gzip
 * header and still form one valid DEFLATE stream (no back-reference crosses a piece). Every
 * decoder (browsers, curl, undici, zlib) reads such a stream as it comes, event by event. The
 * gzip trailer, which holds the CRC-32 and length of everything a connection was sent, is the
 * one per-connection part: `GzipTrail` keeps it, combining each piece's CRC in constant time.
 */

/** The 10-byte gzip header: DEFLATE, no name, no time, Unix. Sent once, first. */
export const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03]);

/** An empty final block of fixed Huffman codes: ends the DEFLATE stream before the trailer. */
const FINAL_EMPTY_BLOCK = Buffer.from([0x03, 0x00]);

/** A piece of the stream: compressed bytes, and what the trailer needs to know of the original. */
export interface GzipFragment {
  /** Non-final DEFLATE blocks, ending on a byte boundary (a sync flush). */
  readonly bytes: Buffer;
  /** CRC-32 of the original bytes. */
  readonly crc: number;
  /** Length of the original bytes. */
  readonly length: number;
  /** The CRC-32 combination operator for `length` bytes (see `crc32Combine`), made once. */
  readonly shift: number;
}

/** Level 9: a piece is compressed once and written to thousands of connections. */
const LEVEL = constants.Z_BEST_COMPRESSION;

export function gzipFragment(data: Buffer | string): GzipFragment {
  const original = typeof data === 'string' ? Buffer.from(data) : data;
  return Object.freeze({
    bytes: deflateRawSync(original, { level: LEVEL, finishFlush: constants.Z_SYNC_FLUSH }),
    crc: crc32(original),
    length: original.length,
    shift: crc32ShiftOperator(original.length),
  });
}

/** The trailer state of one connection's gzip stream: the CRC-32 and length of what it was sent. */
export class GzipTrail {
  #crc = 0;
  #length = 0;

  /** Accounts for `fragment`, written after everything before. */
  add(fragment: GzipFragment): void {
    this.#crc = crc32Combine(this.#crc, fragment.crc, fragment.shift);
    this.#length = (this.#length + fragment.length) % 0x1_0000_0000;
  }

  /** The end of the stream: a final empty block, then the CRC-32 and length (mod 2³²). */
  end(): Buffer {
    const trailer = Buffer.allocUnsafe(FINAL_EMPTY_BLOCK.length + 8);
    FINAL_EMPTY_BLOCK.copy(trailer);
    trailer.writeUInt32LE(this.#crc, FINAL_EMPTY_BLOCK.length);
    trailer.writeUInt32LE(this.#length, FINAL_EMPTY_BLOCK.length + 4);
    return trailer;
  }
}

// CRC-32 combination, as zlib's crc32_combine_gen / crc32_combine_op (zlib 1.2.12+): the CRC of
// A followed by B is CRC(A) · x^(8·|B|) + CRC(B) modulo the CRC polynomial. Node's zlib binding
// offers crc32 but not the combination.

/** The CRC-32 polynomial, reflected. */
const CRC_POLYNOMIAL = 0xedb88320;

/** a · b modulo the CRC polynomial (reflected bit order, x⁰ in the top bit). `a` must not be 0. */
function multModP(a: number, b: number): number {
  let product = 0;
  for (let bit = 0x80000000; ; bit >>>= 1) {
    if (a & bit) {
      product ^= b;
      if ((a & (bit - 1)) === 0) break;
    }
    b = b & 1 ? (b >>> 1) ^ CRC_POLYNOMIAL : b >>> 1;
  }
  return product >>> 0;
}

/** x^(2^k) modulo the polynomial, for k = 0 … 31. */
const X_TO_2_TO_K = new Uint32Array(32);
X_TO_2_TO_K[0] = 0x40000000; // x¹
for (let k = 1; k < 32; k++) X_TO_2_TO_K[k] = multModP(X_TO_2_TO_K[k - 1]!, X_TO_2_TO_K[k - 1]!);

/** x^(n · 2^k) modulo the polynomial. */
function xToNModP(n: number, k: number): number {
  let power = 0x80000000; // x⁰
  for (; n > 0; n = Math.floor(n / 2), k++) {
    if (n % 2 === 1) power = multModP(X_TO_2_TO_K[k % 32]!, power);
  }
  return power;
}

/** The operator that appends `length` bytes' worth of CRC (x^(8·length)). */
export const crc32ShiftOperator = (length: number): number => xToNModP(length, 3);

/** CRC-32 of A followed by B, from CRC(A), CRC(B) and the operator for B's length. */
export const crc32Combine = (crcA: number, crcB: number, shiftB: number): number => (multModP(shiftB, crcA) ^ crcB) >>> 0;
