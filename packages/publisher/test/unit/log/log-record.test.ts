import { crc32 } from 'node:zlib';
import { type FormatName, formatNames } from '@rdf-stream/protocol';
import { describe, expect, it } from 'vitest';
import { decodeRecord, documentsPayload, encodeRecord, RECORD_HEADER_BYTES, splitPayload, type RecordFields } from '../../../src/log/log-record.js';
import { loggedElement } from '../../support/logged-element.js';

/** seq · generatedAt · graph length: the body's fixed part (bytes). */
const FIXED_BODY_BYTES = 18;

const fields = (overrides: Partial<RecordFields> = {}): RecordFields => ({
  seq: 42,
  generatedAtMs: 1_800_000_042_000.5,
  graph: 'http://127.0.0.1:8080/streams/parking/elements/testepoch-42',
  payload: Buffer.from('deflated documents, as the caller compressed them'),
  ...overrides,
});

/** A record whose body was edited by `edit`, with its checksum made right again. */
function withBody(record: Buffer, edit: (body: Buffer) => void): Buffer {
  const copy = Buffer.from(record);
  edit(copy.subarray(RECORD_HEADER_BYTES));
  copy.writeUInt32LE(crc32(copy.subarray(RECORD_HEADER_BYTES)), 4);
  return copy;
}

describe('encodeRecord / decodeRecord', () => {
  it('round-trips every field, and says how many bytes the record took', () => {
    const original = fields();
    const record = encodeRecord(original);
    const decoded = decodeRecord(record, 0);
    expect(decoded).toEqual({ kind: 'record', fields: original, bytes: record.length });
  });

  it('frames the body with its length and its CRC-32 (little-endian)', () => {
    const original = fields();
    const record = encodeRecord(original);
    const graphBytes = Buffer.byteLength(original.graph);
    expect(record.length).toBe(RECORD_HEADER_BYTES + FIXED_BODY_BYTES + graphBytes + original.payload.length);
    expect(record.readUInt32LE(0)).toBe(record.length - RECORD_HEADER_BYTES);
    expect(record.readUInt32LE(4)).toBe(crc32(record.subarray(RECORD_HEADER_BYTES)));
    const body = record.subarray(RECORD_HEADER_BYTES);
    expect([body.readDoubleLE(0), body.readDoubleLE(8), body.readUInt16LE(16)]).toEqual([42, original.generatedAtMs, graphBytes]);
  });

  it('round-trips an idempotency key and its fingerprint, flagged in bit 15 of the graph length', () => {
    const original = fields({ idempotency: { key: 'retry-me-1', fingerprint: 'x'.repeat(43) } });
    const record = encodeRecord(original);
    expect(decodeRecord(record, 0)).toEqual({ kind: 'record', fields: original, bytes: record.length });
    const graphBytes = Buffer.byteLength(original.graph);
    expect(record.subarray(RECORD_HEADER_BYTES).readUInt16LE(16)).toBe(0x8000 | graphBytes);
    expect(record.length).toBe(RECORD_HEADER_BYTES + FIXED_BODY_BYTES + graphBytes + 1 + 10 + 1 + 43 + original.payload.length);
  });

  it('reads a version 1 record (no key, flag clear) as a record without a key', () => {
    const decoded = decodeRecord(encodeRecord(fields()), 0);
    expect(decoded.kind === 'record' && decoded.fields.idempotency).toBeUndefined();
  });

  it('refuses a key that does not fit its length byte, and a keyed record whose key runs past the body', () => {
    expect(() => encodeRecord(fields({ idempotency: { key: 'k'.repeat(256), fingerprint: 'f' } }))).toThrow(RangeError);
    expect(() => encodeRecord(fields({ idempotency: { key: '', fingerprint: 'f' } }))).toThrow(RangeError);
    const keyed = encodeRecord(fields({ idempotency: { key: 'k', fingerprint: 'f' }, payload: Buffer.alloc(0) }));
    const graphBytes = Buffer.byteLength(fields().graph);
    const damaged = withBody(keyed, (body) => body.writeUInt8(200, FIXED_BODY_BYTES + graphBytes));
    expect(decodeRecord(damaged, 0)).toEqual({ kind: 'corrupt', reason: 'invalid idempotency key' });
  });

  it('decodes records one after another, at the offset each ends', () => {
    const records = [1, 2, 3].map((seq) => encodeRecord(fields({ seq, graph: `g${seq}`, payload: Buffer.alloc(seq * 10, seq) })));
    const log = Buffer.concat(records);
    const seqs: number[] = [];
    let offset = 0;
    while (offset < log.length) {
      const decoded = decodeRecord(log, offset);
      if (decoded.kind !== 'record') throw new Error(`${decoded.kind} at ${offset}`);
      seqs.push(decoded.fields.seq);
      expect(decoded.fields.payload.equals(Buffer.alloc(decoded.fields.seq * 10, decoded.fields.seq))).toBe(true);
      offset += decoded.bytes;
    }
    expect(seqs).toEqual([1, 2, 3]);
    expect(offset).toBe(log.length);
  });

  it('keeps an empty graph and an empty payload: the smallest record', () => {
    const smallest = fields({ graph: '', payload: Buffer.alloc(0) });
    const record = encodeRecord(smallest);
    expect(record.length).toBe(RECORD_HEADER_BYTES + FIXED_BODY_BYTES);
    expect(decodeRecord(record, 0)).toEqual({ kind: 'record', fields: smallest, bytes: record.length });
  });

  it('counts the graph IRI in UTF-8 bytes, up to 32 767 of them (bit 15 of the field flags a key)', () => {
    const graph = `http://example.org/${'é'.repeat(10)}`;
    const decoded = decodeRecord(encodeRecord(fields({ graph })), 0);
    expect(decoded.kind === 'record' && decoded.fields.graph).toBe(graph);

    const longest = 'x'.repeat(0x7fff);
    const atLimit = decodeRecord(encodeRecord(fields({ graph: longest })), 0);
    expect(atLimit.kind === 'record' && atLimit.fields.graph).toBe(longest);
    expect(() => encodeRecord(fields({ graph: 'x'.repeat(0x8000) }))).toThrow(RangeError);
    // 16 384 characters, but 32 768 bytes.
    expect(() => encodeRecord(fields({ graph: 'é'.repeat(0x4000) }))).toThrow(/longer than 32767 bytes/);
  });

  it('calls a record cut short truncated: fewer bytes than a header, or than the body the header announces', () => {
    const record = encodeRecord(fields());
    expect(decodeRecord(Buffer.alloc(0), 0)).toEqual({ kind: 'truncated' });
    expect(decodeRecord(record.subarray(0, RECORD_HEADER_BYTES - 1), 0)).toEqual({ kind: 'truncated' });
    expect(decodeRecord(record.subarray(0, RECORD_HEADER_BYTES), 0)).toEqual({ kind: 'truncated' });
    expect(decodeRecord(record.subarray(0, record.length - 1), 0)).toEqual({ kind: 'truncated' });
    expect(decodeRecord(record, record.length)).toEqual({ kind: 'truncated' });
    const twoRecords = Buffer.concat([record, record.subarray(0, 20)]);
    expect(decodeRecord(twoRecords, record.length)).toEqual({ kind: 'truncated' });
  });

  it('calls a record whose bytes changed corrupt (checksum mismatch), wherever the change is', () => {
    const record = encodeRecord(fields());
    for (const position of [4, RECORD_HEADER_BYTES, RECORD_HEADER_BYTES + 20, record.length - 1]) {
      const damaged = Buffer.from(record);
      damaged[position]! ^= 0x01;
      expect(decodeRecord(damaged, 0), `byte ${position}`).toEqual({ kind: 'corrupt', reason: 'checksum mismatch' });
    }
  });

  it('calls a body shorter than its fixed fields corrupt, before reading them', () => {
    const header = Buffer.alloc(RECORD_HEADER_BYTES + 64);
    header.writeUInt32LE(FIXED_BODY_BYTES - 1, 0);
    expect(decodeRecord(header, 0)).toEqual({ kind: 'corrupt', reason: `body length ${FIXED_BODY_BYTES - 1}` });
    header.writeUInt32LE(0, 0);
    expect(decodeRecord(header, 0)).toEqual({ kind: 'corrupt', reason: 'body length 0' });
  });

  it('calls a record with a valid checksum but impossible fields corrupt: a sequence number below 1 or not an integer', () => {
    for (const seq of [0, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
      expect(decodeRecord(encodeRecord(fields({ seq })), 0), String(seq)).toEqual({ kind: 'corrupt', reason: 'invalid fields' });
    }
    for (const seq of [1, Number.MAX_SAFE_INTEGER]) {
      expect(decodeRecord(encodeRecord(fields({ seq })), 0).kind, String(seq)).toBe('record');
    }
  });

  it('calls a graph length beyond the body corrupt, and one that ends exactly at the body\'s end a record', () => {
    const record = encodeRecord(fields({ graph: 'g', payload: Buffer.alloc(0) }));
    expect(decodeRecord(withBody(record, (body) => body.writeUInt16LE(2, 16)), 0)).toEqual({ kind: 'corrupt', reason: 'invalid fields' });
    const graphToEnd = encodeRecord(fields({ graph: 'abc', payload: Buffer.from('def') }));
    const decoded = decodeRecord(withBody(graphToEnd, (body) => body.writeUInt16LE(6, 16)), 0);
    expect(decoded.kind === 'record' && [decoded.fields.graph, decoded.fields.payload.length]).toEqual(['abcdef', 0]);
  });
});

describe('documentsPayload / splitPayload', () => {
  const element = loggedElement(7);

  it('round-trips the documents of every format, in the order of the log\'s formats', () => {
    const payload = documentsPayload(element, formatNames);
    const documents = splitPayload(payload, formatNames);
    expect(Object.keys(documents)).toEqual([...formatNames]);
    for (const format of formatNames) expect(documents[format].equals(element.documents[format]), format).toBe(true);
  });

  it('stores each document as a u32 LE length and its bytes, and only the formats asked for', () => {
    const payload = documentsPayload(element, ['turtle', 'jsonld']);
    const turtle = element.documents.turtle;
    expect(payload.readUInt32LE(0)).toBe(turtle.length);
    expect(payload.subarray(4, 4 + turtle.length).equals(turtle)).toBe(true);
    expect(payload.length).toBe(8 + turtle.length + element.documents.jsonld.length);
    expect(Object.keys(splitPayload(payload, ['turtle', 'jsonld']))).toEqual(['turtle', 'jsonld']);
  });

  it('keeps an empty document', () => {
    const empty = { documents: { ...element.documents, trig: Buffer.alloc(0) } };
    const formats: FormatName[] = ['turtle', 'trig', 'nquads'];
    expect(splitPayload(documentsPayload(empty, formats), formats).trig.length).toBe(0);
  });

  it('refuses a payload too short for the next length', () => {
    const payload = documentsPayload(element, ['turtle']);
    expect(() => splitPayload(payload, ['turtle', 'trig'])).toThrow(new RangeError('record payload too short'));
    expect(() => splitPayload(Buffer.concat([payload, Buffer.alloc(3)]), ['turtle', 'trig'])).toThrow(new RangeError('record payload too short'));
    expect(() => splitPayload(Buffer.alloc(0), ['turtle'])).toThrow(new RangeError('record payload too short'));
  });

  it('refuses a part longer than what is left of the payload', () => {
    const payload = documentsPayload(element, ['turtle']);
    expect(() => splitPayload(payload.subarray(0, payload.length - 1), ['turtle'])).toThrow(new RangeError('record part too long'));
  });

  it('refuses bytes left over after the last part, even one', () => {
    const payload = documentsPayload(element, ['turtle', 'trig']);
    expect(() => splitPayload(Buffer.concat([payload, Buffer.alloc(1)]), ['turtle', 'trig'])).toThrow(new RangeError('record payload has trailing bytes'));
    expect(() => splitPayload(payload, ['turtle'])).toThrow(new RangeError('record payload has trailing bytes'));
  });
});
