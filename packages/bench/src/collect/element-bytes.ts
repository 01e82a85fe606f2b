import { request as httpRequest } from 'node:http';
import { constants, inflateRawSync } from 'node:zlib';
import { elementId, EVENT_STREAM_MEDIA_TYPE, mediaTypes, parseElementId, streamResources, streamResourceSegments } from '@rdf-stream/protocol';
import { request } from 'undici';
import { GzipEventSplitter } from '../fleet/gzip-event-splitter.js';
import { websocketFrameBytes } from './websocket-frame-bytes.js';

/** What one update costs on the wire (bytes, server to client), as the publisher serves it now. */
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
  /** The same event on a gzip event stream, read off the wire; null when it could not be read. */
  readonly sseEventGzip: number | null;
  /** The element as one WebSocket text frame (header, `element {id}` line, document), read off the wire; null without the endpoint. */
  readonly websocketFrame: number | null;
}

/** The size of a status line and headers as they go on the wire (HTTP/1.1). */
const headerBytes = (statusLine: string, headers: Record<string, string | string[] | undefined>) =>
  Buffer.byteLength(statusLine) +
  2 +
  Object.entries(headers).reduce((sum, [name, value]) => sum + [value ?? []].flat().reduce((bytes, one) => bytes + Buffer.byteLength(`${name}: ${one}\r\n`), 0), 0) +
  2;

/**
 * Reads the stream's `/latest` three ways (identity, gzip, revalidated) and derives the SSE
 * event's size; reads the compressed event off a gzip event stream (`{stream}/events`).
 */
export async function measureElementBytes(streamUrl: string): Promise<ElementBytes> {
  const resources = streamResources(streamUrl);
  const latestUrl = resources.latest;
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
    if (revalidated.status === 304 || attempt === MEASURE_ATTEMPTS) {
      const measured = sizes(identity, gzip, revalidated);
      const id = parseElementId(elementIdIn(identity.body.toString('utf8')));
      const eventsUrl = `${resources.events}?format=turtle`;
      const sseEventGzip = id === undefined ? null : await gzipEventBytes(eventsUrl, id.epoch, id.seq).catch(() => null);
      const wsUrl = `${resources.webSocket}?format=turtle`;
      const websocketFrame = id === undefined || id.seq < 2 ? null : await websocketFrameBytes(wsUrl, id.epoch, id.seq).catch(() => null);
      return { ...measured, sseEventGzip, websocketFrame };
    }
  }
}

/** How long reading one compressed event may take (ms). */
const EVENT_READ_TIMEOUT_MS = 5_000;

/**
 * One element's event on a gzip event stream, in bytes on the wire, exactly: the stream resumed
 * after element N−1 carries element N; the publisher compresses each message alone and ends it
 * with a sync flush, so the event is the piece (`GzipEventSplitter`) whose text is element N's
 * event — compressed as every gzip subscriber gets it. Null when the stream is not compressed or
 * the element is not met within `EVENT_READ_TIMEOUT_MS`.
 */
function gzipEventBytes(eventsUrl: string, epoch: string, latestSeq: number): Promise<number | null> {
  if (latestSeq < 2) return Promise.resolve(null);
  const wanted = `id: ${elementId(epoch, latestSeq)}\n`;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      eventsUrl,
      {
        headers: { accept: EVENT_STREAM_MEDIA_TYPE, 'accept-encoding': 'gzip', 'last-event-id': elementId(epoch, latestSeq - 1) },
        signal: AbortSignal.timeout(EVENT_READ_TIMEOUT_MS),
      },
      (response) => {
        if (response.headers['content-encoding'] !== 'gzip') {
          req.destroy();
          resolve(null);
          return;
        }
        const splitter = new GzipEventSplitter();
        // A piece cut at `00 00 ff ff` inside compressed data is not a whole message: joined to the next.
        let carried: Buffer | undefined;
        response.on('data', (chunk: Buffer) => {
          for (const piece of splitter.push(chunk)) {
            const whole = carried === undefined ? piece : Buffer.concat([carried, piece]);
            const text = inflateRawSync(whole, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8');
            carried = text.endsWith('\n') ? undefined : whole;
            if (carried === undefined && text.includes(wanted)) {
              req.destroy();
              resolve(whole.length);
              return;
            }
          }
        });
      },
    );
    req.on('error', (error) => (error.name === 'AbortError' ? resolve(null) : reject(error)));
    req.end();
  });
}

/** The id of the element IRI (`<…/elements/{epoch}-{seq}>`) in a Turtle document; '' when there is none. */
const elementIdIn = (turtle: string) => new RegExp(`/${streamResourceSegments.elements}/([\\w-]+)>`).exec(turtle)?.[1] ?? '';

/** Reads of the three answers before giving up on seeing one element thrice (an element every few ms). */
const MEASURE_ATTEMPTS = 5;

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer };

function sizes(identity: Answer, gzip: Answer, revalidated: Answer): Omit<ElementBytes, 'sseEventGzip' | 'websocketFrame'> {
  if (revalidated.status !== 304) throw new Error(`/latest changed under every measurement (${revalidated.status} to If-None-Match)`);
  const text = identity.body.toString('utf8');
  const lines = text.split('\n').length;
  const id = elementIdIn(text);
  return {
    identity: identity.body.length,
    gzip: gzip.body.length,
    headers200: headerBytes('HTTP/1.1 200 OK', identity.headers),
    response304: headerBytes('HTTP/1.1 304 Not Modified', revalidated.headers),
    sseEvent: Buffer.byteLength(`id: ${id}\n`) + identity.body.length + lines * 'data: '.length + 1,
  };
}
