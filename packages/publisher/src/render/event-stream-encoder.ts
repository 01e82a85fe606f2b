import type { FormatName } from '@rdf-stream/protocol';
import { GZIP_HEADER, type GzipFragment, gzipFragment, GzipTrail } from './gzip-fragment.js';
import type { LoggedElement } from './render-element.js';

/**
 * How an event stream travels: as written, or gzip-compressed (`Content-Encoding: gzip`, which
 * every browser accepts). Compressed, each event is a `GzipFragment` made once and written to
 * every gzip subscriber; only the gzip header and trailer are a connection's own.
 */
export const sseEncodings = ['gzip', 'identity'] as const;
export type SseEncoding = (typeof sseEncodings)[number];

/** One SSE message as written to a connection of either encoding. */
export type WireFrame = Buffer | GzipFragment;

/** A message for everyone (a heartbeat, a gap), ready in both encodings. */
export interface EncodedFrame {
  readonly identity: Buffer;
  readonly gzip: GzipFragment;
}

export function encodedFrame(frame: string): EncodedFrame {
  const identity = Buffer.from(frame);
  return Object.freeze({ identity, gzip: gzipFragment(identity) });
}

/** The bytes a frame puts on the wire. */
export const wireBytes = (frame: WireFrame): Buffer => (Buffer.isBuffer(frame) ? frame : frame.bytes);

/** Each element's gzip fragments by format, made on first use and dropped with the element. */
const fragments = new WeakMap<LoggedElement, Partial<Record<FormatName, GzipFragment>>>();

/**
 * An element's SSE frame in `format` and `encoding`. Its gzip fragment is made once per element
 * and format, when a gzip subscriber first needs it, and lives as long as the element object
 * (the log's cache holds the recent ones): a broadcast compresses once, not per subscriber.
 */
export function elementFrame(element: LoggedElement, format: FormatName, encoding: SseEncoding): WireFrame {
  if (encoding === 'identity') return element.frames[format];
  let byFormat = fragments.get(element);
  if (byFormat === undefined) {
    byFormat = {};
    fragments.set(element, byFormat);
  }
  return (byFormat[format] ??= gzipFragment(element.frames[format]));
}

/**
 * One connection's side of the encoding: what goes first (the gzip header), each frame's bytes
 * (the gzip trail follows what was sent), and the end of the stream (the gzip trailer), so that
 * a stream that ends properly is a whole, valid gzip body.
 */
export class EventStreamEncoder {
  readonly #trail: GzipTrail | undefined;

  constructor(readonly encoding: SseEncoding) {
    this.#trail = encoding === 'gzip' ? new GzipTrail() : undefined;
  }

  /** The first bytes of the stream, carrying `preamble` (e.g. `retry:` and a comment). */
  start(preamble: string): Buffer {
    const first = this.encode(preamble);
    return this.#trail === undefined ? first : Buffer.concat([GZIP_HEADER, first]);
  }

  /** The bytes of `frame` for this connection: one for everyone, or a message of its own. */
  encode(frame: WireFrame | EncodedFrame | string): Buffer {
    const wire = typeof frame === 'string' ? this.#own(frame) : 'identity' in frame ? frame[this.encoding] : frame;
    if (Buffer.isBuffer(wire)) {
      if (this.#trail !== undefined) throw new TypeError('an identity frame cannot go into a gzip stream');
      return wire;
    }
    if (this.#trail === undefined) throw new TypeError('a gzip fragment cannot go into an identity stream');
    this.#trail.add(wire);
    return wire.bytes;
  }

  /** The last bytes of the stream, after `farewell` if given. */
  end(farewell?: string): Buffer | undefined {
    const last = farewell === undefined ? undefined : this.encode(farewell);
    if (this.#trail === undefined) return last;
    return last === undefined ? this.#trail.end() : Buffer.concat([last, this.#trail.end()]);
  }

  #own(frame: string): WireFrame {
    return this.#trail === undefined ? Buffer.from(frame) : gzipFragment(frame);
  }
}
