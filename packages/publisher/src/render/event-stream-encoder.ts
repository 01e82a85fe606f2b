import type { FormatName } from '@rdf-stream/protocol';
import { GZIP_HEADER, type GzipFragment, gzipFragment, GzipTrail } from './gzip-fragment.js';
import { perElement } from './per-element.js';
import type { LoggedElement } from './render-element.js';
import { elementSseFrame } from './sse-frame.js';

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

/** An element's SSE frame in `format` as a gzip fragment, made once per element and format (`perElement`). */
const elementGzipFragment = perElement((element: LoggedElement, format: FormatName) => gzipFragment(elementSseFrame(element, format)));

/**
 * An element's SSE frame in `format` and `encoding`. The frame (`elementSseFrame`) and its gzip
 * fragment are each made once per element and format, when a subscriber first needs them, and
 * live as long as the element object (the log's cache holds the recent ones): a broadcast
 * frames and compresses once, not per subscriber.
 */
export function elementFrame(element: LoggedElement, format: FormatName, encoding: SseEncoding): WireFrame {
  return encoding === 'identity' ? elementSseFrame(element, format) : elementGzipFragment(element, format);
}

/** HTTP/1.1 chunked framing of shared bytes, made once per Buffer (`chunkFramed`). */
const framedChunks = new WeakMap<Buffer, Buffer>();

/** `bytes` as one HTTP/1.1 chunk (RFC 9112 §7.1): size in hex, CRLF, the bytes, CRLF. */
export function chunkFramed(bytes: Buffer): Buffer {
  // A chunk of size 0 is the last chunk: it would end the body.
  if (bytes.length === 0) return bytes;
  const framed = Buffer.allocUnsafe(bytes.length + 16);
  let offset = framed.write(`${bytes.length.toString(16)}\r\n`, 'latin1');
  offset += bytes.copy(framed, offset);
  offset += framed.write('\r\n', offset, 'latin1');
  return framed.subarray(0, offset);
}

/** The last chunk of a chunked body, with no trailer fields. */
const LAST_CHUNK = Buffer.from('0\r\n\r\n', 'latin1');

/**
 * One connection's side of the stream: its encoding (the gzip header first, the gzip trail
 * following what was sent, the gzip trailer at the end, so that a stream that ends properly is
 * a whole, valid gzip body) and, when `chunked`, its HTTP/1.1 chunked framing — built once per
 * shared frame too, so that writing an event to a subscriber is one write of ready bytes to its
 * socket, as cheap as it gets in Node. Without `chunked` (HTTP/1.0, or a response that frames
 * its own body) the bytes go as they are.
 */
export class EventStreamEncoder {
  readonly #trail: GzipTrail | undefined;

  constructor(
    readonly encoding: SseEncoding,
    readonly chunked = false,
  ) {
    this.#trail = encoding === 'gzip' ? new GzipTrail() : undefined;
  }

  /** The first bytes of the stream, carrying `preamble` (e.g. `retry:` and a comment). */
  start(preamble: string): Buffer {
    const first = this.#payload(preamble);
    return this.#framed(this.#trail === undefined ? first : Buffer.concat([GZIP_HEADER, first]));
  }

  /** The bytes of `frame` for this connection: one for everyone, or a message of its own. */
  encode(frame: WireFrame | EncodedFrame | string): Buffer {
    const payload = this.#payload(frame);
    if (!this.chunked) return payload;
    if (typeof frame === 'string') return chunkFramed(payload);
    let framed = framedChunks.get(payload);
    if (framed === undefined) {
      framed = chunkFramed(payload);
      framedChunks.set(payload, framed);
    }
    return framed;
  }

  /** The last bytes of the stream, after `farewell` if given; undefined when there are none. */
  end(farewell?: string): Buffer | undefined {
    const parts: Buffer[] = [];
    if (farewell !== undefined) parts.push(this.#payload(farewell));
    if (this.#trail !== undefined) parts.push(this.#trail.end());
    const last = parts.length === 0 ? undefined : Buffer.concat(parts);
    if (!this.chunked) return last;
    return last === undefined ? LAST_CHUNK : Buffer.concat([chunkFramed(last), LAST_CHUNK]);
  }

  /** The encoded bytes of `frame`, unframed; a gzip fragment is accounted for in the trail. */
  #payload(frame: WireFrame | EncodedFrame | string): Buffer {
    const wire = typeof frame === 'string' ? this.#own(frame) : 'identity' in frame ? frame[this.encoding] : frame;
    if (Buffer.isBuffer(wire)) {
      if (this.#trail !== undefined) throw new TypeError('an identity frame cannot go into a gzip stream');
      return wire;
    }
    if (this.#trail === undefined) throw new TypeError('a gzip fragment cannot go into an identity stream');
    this.#trail.add(wire);
    return wire.bytes;
  }

  #own(frame: string): WireFrame {
    return this.#trail === undefined ? Buffer.from(frame) : gzipFragment(frame);
  }

  #framed(bytes: Buffer): Buffer {
    return this.chunked ? chunkFramed(bytes) : bytes;
  }
}
