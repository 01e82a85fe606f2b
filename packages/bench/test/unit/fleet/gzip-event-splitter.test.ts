import { constants, deflateRawSync, gzipSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { GzipEventSplitter, gzipHeaderLength, SYNC_FLUSH_MARKER } from '../../../src/fleet/gzip-event-splitter.js';

const piece = (text: string) => deflateRawSync(Buffer.from(text), { finishFlush: constants.Z_SYNC_FLUSH });
const inflate = (bytes: Buffer) => inflateRawSync(bytes, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8');
const HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03]);

describe('gzipHeaderLength (RFC 1952 §2.3)', () => {
  it('is 10 bytes for a header without optional fields, and undefined until all 10 came', () => {
    expect(gzipHeaderLength(HEADER)).toBe(10);
    expect(gzipHeaderLength(HEADER.subarray(0, 9))).toBeUndefined();
    expect(gzipHeaderLength(Buffer.alloc(0))).toBeUndefined();
  });

  it('skips the optional extra field, file name, comment and header CRC', () => {
    // zlib writes a name when asked: FNAME set, the name zero-terminated after the 10 bytes.
    const named = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x08 | 0x10 | 0x04 | 0x02, 0, 0, 0, 0, 0, 3]), Buffer.from([2, 0, 0xaa, 0xbb]), Buffer.from('a.txt\0'), Buffer.from('note\0'), Buffer.from([0x12, 0x34])]);
    expect(gzipHeaderLength(named)).toBe(10 + 4 + 6 + 5 + 2);
    expect(gzipHeaderLength(named.subarray(0, 10 + 4 + 3))).toBeUndefined();
    expect(gzipHeaderLength(Buffer.concat([named, Buffer.from([1, 2, 3])]))).toBe(27);
  });

  it('refuses what is not gzip as soon as its first bytes show it', () => {
    expect(() => gzipHeaderLength(Buffer.from('da'))).toThrow(/not a gzip stream/);
    expect(() => gzipHeaderLength(Buffer.from([0x1f, 0x8b, 0x07]))).toThrow(/not a DEFLATE/);
  });

  it('agrees with the header node:zlib writes', () => {
    expect(gzipHeaderLength(gzipSync('x'))).toBe(10);
  });
});

describe('GzipEventSplitter', () => {
  const messages = ['retry: 1000\n\n', `id: 1\ndata: ${'a'.repeat(300)}\n\n`, ':\n\n', `id: 2\ndata: ${'b c '.repeat(400)}\n\n`];
  const body = Buffer.concat([HEADER, ...messages.map(piece)]);

  it('gives one piece per message, each ending with the sync flush marker and inflating alone to its message', () => {
    const pieces = new GzipEventSplitter().push(body);
    expect(pieces.map(inflate)).toEqual(messages);
    for (const found of pieces) expect([...found.subarray(-4)]).toEqual(SYNC_FLUSH_MARKER);
  });

  it('finds the same pieces whatever the chunks: the header or a marker split across two, one byte at a time', () => {
    const whole = new GzipEventSplitter().push(body);
    for (const size of [1, 2, 3, 5, 9, 10, 11, 13, 100]) {
      const splitter = new GzipEventSplitter();
      const found: Buffer[] = [];
      for (let offset = 0; offset < body.length; offset += size) found.push(...splitter.push(body.subarray(offset, offset + size)));
      expect(found, `chunks of ${size} bytes`).toEqual(whole);
    }
  });

  it('keeps the bytes of a message that has not ended, and gives nothing for them yet', () => {
    const splitter = new GzipEventSplitter();
    const second = piece(messages[1]!);
    expect(splitter.push(Buffer.concat([HEADER, second.subarray(0, 20)]))).toEqual([]);
    expect(splitter.push(second.subarray(20))).toEqual([second]);
  });
});
