import { crc32 } from 'node:zlib';
import type { FormatName } from '@rdf-stream/protocol';
import type { LoggedElement } from '../render/render-element.js';

/**
 * One element on disk:
 *
 * ```
 * u32 LE  body length
 * u32 LE  CRC-32 of the body
 * body:   f64 LE seq · f64 LE generatedAt (ms) · u16 LE graph length · graph (UTF-8)
 *         · deflated payload: for each format of the log, u32 LE length · SSE frame bytes
 * ```
 *
 * The frames are stored as rendered (compressed together: the five formats of a demo element,
 * 47 kB, deflate to about 1.8 kB), so that no reader ever renders an element again.
 */
export const RECORD_HEADER_BYTES = 8;
const FIXED_BODY_BYTES = 8 + 8 + 2;

/** What the codec stores of an element; the payload is compressed by the caller (off the event loop). */
export interface RecordFields {
  readonly seq: number;
  readonly generatedAtMs: number;
  readonly graph: string;
  readonly payload: Buffer;
}

/** The frames of every format, concatenated with their lengths, ready to be compressed. */
export function framesPayload(element: Pick<LoggedElement, 'frames'>, formats: readonly FormatName[]): Buffer {
  const parts: Buffer[] = [];
  for (const format of formats) {
    const frame = element.frames[format];
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32LE(frame.length);
    parts.push(length, frame);
  }
  return Buffer.concat(parts);
}

/** Splits a decompressed payload back into frames; throws on a payload that does not add up. */
export function payloadFrames(payload: Buffer, formats: readonly FormatName[]): Record<FormatName, Buffer> {
  const frames = {} as Record<FormatName, Buffer>;
  let offset = 0;
  for (const format of formats) {
    if (offset + 4 > payload.length) throw new RangeError('record payload too short');
    const length = payload.readUInt32LE(offset);
    offset += 4;
    if (offset + length > payload.length) throw new RangeError('record frame too long');
    frames[format] = payload.subarray(offset, offset + length);
    offset += length;
  }
  if (offset !== payload.length) throw new RangeError('record payload has trailing bytes');
  return frames;
}

export function encodeRecord(fields: RecordFields): Buffer {
  const graph = Buffer.from(fields.graph, 'utf8');
  if (graph.length > 0xffff) throw new RangeError('graph IRI longer than 65 535 bytes');
  const bodyLength = FIXED_BODY_BYTES + graph.length + fields.payload.length;
  const record = Buffer.allocUnsafe(RECORD_HEADER_BYTES + bodyLength);
  record.writeUInt32LE(bodyLength, 0);
  let offset = RECORD_HEADER_BYTES;
  offset = record.writeDoubleLE(fields.seq, offset);
  offset = record.writeDoubleLE(fields.generatedAtMs, offset);
  offset = record.writeUInt16LE(graph.length, offset);
  offset += graph.copy(record, offset);
  fields.payload.copy(record, offset);
  record.writeUInt32LE(crc32(record.subarray(RECORD_HEADER_BYTES)), 4);
  return record;
}

export type DecodedRecord =
  | { readonly kind: 'record'; readonly fields: RecordFields; readonly bytes: number }
  /** Too few bytes left for the record its header announces: a write cut short. */
  | { readonly kind: 'truncated' }
  /** The bytes do not check out: a torn write, or garbage. */
  | { readonly kind: 'corrupt'; readonly reason: string };

/** Decodes the record at `offset` of `buffer`, verifying its checksum. */
export function decodeRecord(buffer: Buffer, offset: number): DecodedRecord {
  if (buffer.length - offset < RECORD_HEADER_BYTES) return { kind: 'truncated' };
  const bodyLength = buffer.readUInt32LE(offset);
  if (bodyLength < FIXED_BODY_BYTES) return { kind: 'corrupt', reason: `body length ${bodyLength}` };
  const end = offset + RECORD_HEADER_BYTES + bodyLength;
  if (end > buffer.length) return { kind: 'truncated' };
  const body = buffer.subarray(offset + RECORD_HEADER_BYTES, end);
  if (crc32(body) !== buffer.readUInt32LE(offset + 4)) return { kind: 'corrupt', reason: 'checksum mismatch' };
  const seq = body.readDoubleLE(0);
  const generatedAtMs = body.readDoubleLE(8);
  const graphLength = body.readUInt16LE(16);
  if (!Number.isSafeInteger(seq) || seq < 1 || FIXED_BODY_BYTES + graphLength > body.length) {
    return { kind: 'corrupt', reason: 'invalid fields' };
  }
  const graph = body.toString('utf8', FIXED_BODY_BYTES, FIXED_BODY_BYTES + graphLength);
  const payload = body.subarray(FIXED_BODY_BYTES + graphLength);
  return { kind: 'record', fields: { seq, generatedAtMs, graph, payload }, bytes: end - offset };
}
