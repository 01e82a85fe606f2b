import { mediaTypes } from '@rdf-stream/protocol';
import { request } from 'undici';

/** What one update costs on the wire (bytes), as the publisher serves it now. */
export interface ElementBytes {
  /** `/latest` body, Turtle, identity. */
  readonly identity: number;
  /** The same body as the publisher pre-compresses it (gzip). */
  readonly gzip: number;
  /** The status line and headers of that 200 (identity). */
  readonly headers200: number;
  /** A 304 to `If-None-Match`: status line and headers, no body. */
  readonly response304: number;
  /** The element as one SSE event: `id:` line, a `data:` prefix per line, the blank line. */
  readonly sseEvent: number;
}

/** The size of a status line and headers as they go on the wire (HTTP/1.1). */
const headerBytes = (statusLine: string, headers: Record<string, string | string[] | undefined>) =>
  Buffer.byteLength(statusLine) +
  2 +
  Object.entries(headers).reduce((sum, [name, value]) => sum + [value ?? []].flat().reduce((bytes, one) => bytes + Buffer.byteLength(`${name}: ${one}\r\n`), 0), 0) +
  2;

/** Reads `/latest` three ways (identity, gzip, revalidated) and derives the SSE event's size. */
export async function measureElementBytes(latestUrl: string): Promise<ElementBytes> {
  const get = async (headers: Record<string, string>): Promise<Answer> => {
    const response = await request(latestUrl, { headers: { accept: mediaTypes.turtle, ...headers } });
    const body = Buffer.from(await response.body.arrayBuffer());
    return { status: response.statusCode, headers: response.headers, body };
  };
  // The three answers must be of one element: read again when one was published in between.
  for (let attempt = 1; ; attempt++) {
    const identity = await get({ 'accept-encoding': 'identity' });
    const gzip = await get({ 'accept-encoding': 'gzip' });
    const revalidated = await get({ 'accept-encoding': 'identity', 'if-none-match': String(identity.headers.etag) });
    if (revalidated.status === 304 || attempt === MEASURE_ATTEMPTS) return sizes(identity, gzip, revalidated);
  }
}

/** Reads of the three answers before giving up on seeing one element thrice (an element every few ms). */
const MEASURE_ATTEMPTS = 5;

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer };

function sizes(identity: Answer, gzip: Answer, revalidated: Answer): ElementBytes {
  if (revalidated.status !== 304) throw new Error(`/latest changed under every measurement (${revalidated.status} to If-None-Match)`);
  const text = identity.body.toString('utf8');
  const lines = text.split('\n').length;
  const id = /\/elements\/([\w-]+)>/.exec(text)?.[1] ?? '';
  return {
    identity: identity.body.length,
    gzip: gzip.body.length,
    headers200: headerBytes('HTTP/1.1 200 OK', identity.headers),
    response304: headerBytes('HTTP/1.1 304 Not Modified', revalidated.headers),
    sseEvent: Buffer.byteLength(`id: ${id}\n`) + identity.body.length + lines * 'data: '.length + 1,
  };
}
