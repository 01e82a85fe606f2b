import { crc32 } from 'node:zlib';
import type { FormatName } from '@rdf-stream/protocol';
import type { IdempotencyStamp, LoggedElement } from '../model/stream-element.js';

/**
 * One element on disk (log format version 3):
 *
 * ```
 * u32 LE  body length
 * u32 LE  CRC-32 of the body
 * body:   f64 LE seq · f64 LE generatedAt (ms) · u16 LE flags and graph length · graph (UTF-8)
 *         · if flagged KEYED: u8 key length · key (ASCII) · u8 fingerprint length · fingerprint (ASCII)
 *         · deflated payload: for each format of the log, u32 LE length · document bytes
 * ```
 *
 * The documents are stored as rendered (compressed together: the five documents of the golden
 * test element, 12 kB, deflate to 0.83 kB), so that no reader ever renders an element again;
 * the wire forms (SSE frames, WebSocket messages) are made from them on first use, so that a
 * change of framing is no change of the log. The key is the ingest request's `Idempotency-Key`
 * with the fingerprint of its body, stored with the element in the same write, so that a retry
 * after a crash finds it; it is outside the deflated payload, so that start-up reads keys
 * without inflating anything.
 *
 * Versions 1 and 2 had the same records with each format's SSE frame in the payload instead of
 * its document (version 1 without the KEYED flag: graphs were never 32 KiB long); a writer
 * upgrades such a log when it opens it (`log-upgrade.ts`).
 */
export const RECORD_HEADER_BYTES = 8;
const FIXED_BODY_BYTES = 8 + 8 + 2;
/** Bit 15 of the graph length field: the record carries an idempotency key. */
const KEYED = 0x8000;
/** Longest graph IRI a record holds (bytes): the field's other 15 bits. */
const MAX_GRAPH_BYTES = 0x7fff;
/** Longest key and fingerprint (bytes): one length byte each. */
const MAX_STAMP_PART_BYTES = 0xff;

/** What the codec stores of an element; the payload is compressed by the caller (off the event loop). */
export interface RecordFields {
  readonly seq: number;
  readonly generatedAtMs: number;
  readonly graph: string;
  /** The ingest request's `Idempotency-Key` and body fingerprint, if it sent a key. */
  readonly idempotency?: IdempotencyStamp | undefined;
  readonly payload: Buffer;
}

/** The documents of every format, concatenated with their lengths, ready to be compressed. */
export function documentsPayload(element: Pick<LoggedElement, 'documents'>, formats: readonly FormatName[]): Buffer {
  return joinPayload(formats.map((format) => element.documents[format]));
}

/** `parts` concatenated, each after its u32 LE length: a record's payload, uncompressed. */
export function joinPayload(parts: readonly Buffer[]): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32LE(part.length);
    pieces.push(length, part);
  }
  return Buffer.concat(pieces);
}

/**
 * Splits a decompressed payload back into one part per format (documents; frames in a version
 * 1 or 2 record); throws on a payload that does not add up.
 */
export function splitPayload(payload: Buffer, formats: readonly FormatName[]): Record<FormatName, Buffer> {
  const parts = {} as Record<FormatName, Buffer>;
  let offset = 0;
  for (const format of formats) {
    if (offset + 4 > payload.length) throw new RangeError('record payload too short');
    const length = payload.readUInt32LE(offset);
    offset += 4;
    if (offset + length > payload.length) throw new RangeError('record part too long');
    parts[format] = payload.subarray(offset, offset + length);
    offset += length;
  }
  if (offset !== payload.length) throw new RangeError('record payload has trailing bytes');
  return parts;
}

export function encodeRecord(fields: RecordFields): Buffer {
  const graph = Buffer.from(fields.graph, 'utf8');
  if (graph.length > MAX_GRAPH_BYTES) throw new RangeError(`graph IRI longer than ${MAX_GRAPH_BYTES} bytes`);
  const stamp = fields.idempotency === undefined ? undefined : stampBytes(fields.idempotency);
  const stampLength = stamp === undefined ? 0 : 2 + stamp.key.length + stamp.fingerprint.length;
  const bodyLength = FIXED_BODY_BYTES + graph.length + stampLength + fields.payload.length;
  const record = Buffer.allocUnsafe(RECORD_HEADER_BYTES + bodyLength);
  record.writeUInt32LE(bodyLength, 0);
  let offset = RECORD_HEADER_BYTES;
  offset = record.writeDoubleLE(fields.seq, offset);
  offset = record.writeDoubleLE(fields.generatedAtMs, offset);
  offset = record.writeUInt16LE(graph.length | (stamp === undefined ? 0 : KEYED), offset);
  offset += graph.copy(record, offset);
  if (stamp !== undefined) {
    offset = record.writeUInt8(stamp.key.length, offset);
    offset += stamp.key.copy(record, offset);
    offset = record.writeUInt8(stamp.fingerprint.length, offset);
    offset += stamp.fingerprint.copy(record, offset);
  }
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
  const flagsAndLength = body.readUInt16LE(16);
  const graphLength = flagsAndLength & MAX_GRAPH_BYTES;
  if (!Number.isSafeInteger(seq) || seq < 1 || FIXED_BODY_BYTES + graphLength > body.length) {
    return { kind: 'corrupt', reason: 'invalid fields' };
  }
  const graph = body.toString('utf8', FIXED_BODY_BYTES, FIXED_BODY_BYTES + graphLength);
  let cursor = FIXED_BODY_BYTES + graphLength;
  let idempotency: IdempotencyStamp | undefined;
  if ((flagsAndLength & KEYED) !== 0) {
    const key = readShortString(body, cursor);
    const fingerprint = key === undefined ? undefined : readShortString(body, key.end);
    if (key === undefined || fingerprint === undefined || key.text.length === 0) return { kind: 'corrupt', reason: 'invalid idempotency key' };
    idempotency = { key: key.text, fingerprint: fingerprint.text };
    cursor = fingerprint.end;
  }
  const payload = body.subarray(cursor);
  return { kind: 'record', fields: { seq, generatedAtMs, graph, idempotency, payload }, bytes: end - offset };
}

function stampBytes(stamp: IdempotencyStamp): { key: Buffer; fingerprint: Buffer } {
  const key = Buffer.from(stamp.key, 'latin1');
  const fingerprint = Buffer.from(stamp.fingerprint, 'latin1');
  if (key.length === 0 || key.length > MAX_STAMP_PART_BYTES || fingerprint.length > MAX_STAMP_PART_BYTES) {
    throw new RangeError(`an idempotency key and its fingerprint hold 1–${MAX_STAMP_PART_BYTES} bytes`);
  }
  return { key, fingerprint };
}

/** A u8-length-prefixed string at `offset`, or undefined if it runs past the body. */
function readShortString(body: Buffer, offset: number): { text: string; end: number } | undefined {
  if (offset + 1 > body.length) return undefined;
  const end = offset + 1 + body.readUInt8(offset);
  if (end > body.length) return undefined;
  return { text: body.toString('latin1', offset + 1, end), end };
}
