import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

export const encodings = ['br', 'gzip', 'identity'] as const;
export type Encoding = (typeof encodings)[number];

export type EncodedBodies = Readonly<Record<Encoding, Buffer>>;

/**
 * Compresses a body once, at the strongest settings (it is served many times). Runs on the libuv
 * thread pool so that publishing never blocks the event loop.
 */
export async function compressOnce(body: Buffer): Promise<EncodedBodies> {
  const [br, gz] = await Promise.all([
    brotli(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
    gzipAsync(body, { level: 9 }),
  ]);
  return Object.freeze({ br, gzip: gz, identity: body });
}
