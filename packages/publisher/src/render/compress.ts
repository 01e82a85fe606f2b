import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

export const encodings = ['br', 'gzip', 'identity'] as const;
export type Encoding = (typeof encodings)[number];

export type EncodedBodies = Readonly<Record<Encoding, Buffer>>;

/** Above this size, faster settings: large (ingested) elements may arrive many times a second. */
export const LARGE_BODY_BYTES = 16 * 1024;

/** What a brotli window of 2^bits bytes cannot reference: its last 16 bytes (RFC 7932 §9.1). */
const BROTLI_WINDOW_GAP_BYTES = 16;

/**
 * Brotli's sliding window for a body of `bytes`, as log2 of its size: the smallest that holds
 * the whole body (a window is 2^bits − 16 bytes), within brotli's 10–22 (its default, 4 MiB,
 * is the largest without the large-window extension). A larger window finds nothing more in a
 * body it already holds, but costs: at quality 9 and the default window, brotli allocates a
 * 32 MiB hash table and touches ~2 MiB of it for a 5–13 kB element (~500 page faults, 0.8–1 ms);
 * with the window fitted, 0.04–0.3 ms and a handful of faults, for the same output (±1 byte).
 */
export function brotliWindowBits(bytes: number): number {
  const bits = Math.ceil(Math.log2(bytes + BROTLI_WINDOW_GAP_BYTES));
  return Math.min(constants.BROTLI_DEFAULT_WINDOW, Math.max(constants.BROTLI_MIN_WINDOW_BITS, bits));
}

/**
 * Compresses a body once (it is served many times), on the libuv thread pool so that
 * publishing never blocks the event loop. Brotli quality 9, not 11: on our elements 11 takes
 * ~10× longer (≈ 8 ms against 0.8 ms for 12 kB) for < 2 % smaller output. Above
 * `LARGE_BODY_BYTES`, brotli 5 and gzip 6: for a 100-observation element in five formats
 * (32–90 kB each) they took 2.6 + 1.6 ms against 14.8 + 4.7 ms, for 3.5 % (br) and 4 % (gzip)
 * more bytes.
 */
export async function compressOnce(body: Buffer): Promise<EncodedBodies> {
  const large = body.length > LARGE_BODY_BYTES;
  const [br, gz] = await Promise.all([
    brotli(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: large ? 5 : 9,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
        [constants.BROTLI_PARAM_LGWIN]: brotliWindowBits(body.length),
      },
    }),
    gzipAsync(body, { level: large ? 6 : 9 }),
  ]);
  return Object.freeze({ br, gzip: gz, identity: body });
}
