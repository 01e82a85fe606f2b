import { crc32, gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32Combine, crc32ShiftOperator, GZIP_HEADER, gzipFragment, GzipTrail } from '../../../src/render/gzip-fragment.js';

/** A whole gzip stream of `pieces`, as a connection that was sent them in this order gets it. */
function stream(pieces: ReadonlyArray<Buffer | string>): Buffer {
  const trail = new GzipTrail();
  const fragments = pieces.map((piece) => gzipFragment(piece));
  for (const fragment of fragments) trail.add(fragment);
  return Buffer.concat([GZIP_HEADER, ...fragments.map((fragment) => fragment.bytes), trail.end()]);
}

describe('gzip fragments', () => {
  it('combines CRC-32s as zlib does: CRC(A·B) from CRC(A), CRC(B) and |B|', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), fc.uint8Array({ maxLength: 3000 }), (a, b) => {
        const combined = crc32Combine(crc32(a), crc32(b), crc32ShiftOperator(b.length));
        expect(combined).toBe(crc32(Buffer.concat([a, b])));
      }),
      { numRuns: 300 },
    );
  });

  it('fragments compressed apart, concatenated in any order, are one valid gzip stream (CRC and length checked)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 2000 }), { maxLength: 12 }), (pieces) => {
        expect(gunzipSync(stream(pieces)).toString()).toBe(pieces.join(''));
      }),
      { numRuns: 200 },
    );
  });

  it('a fragment ends on a byte boundary with a sync flush and never ends the stream', () => {
    const fragment = gzipFragment('id: e-1\ndata: <a> <b> "c" .\n\n');
    expect(fragment.bytes.subarray(-4)).toEqual(Buffer.from([0x00, 0x00, 0xff, 0xff]));
    expect(fragment.length).toBe(29);
    // Repetitive RDF compresses: a 5 kB element to a few hundred bytes.
    const element = gzipFragment(`data: ${'<http://example.org/s> <http://example.org/p> "42"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'.repeat(50)}`);
    expect(element.bytes.length).toBeLessThan(element.length / 10);
  });

  it('the same fragment Buffer serves every connection: the trailer is what differs', () => {
    const shared = gzipFragment('id: e-2\ndata: two\n\n');
    const early = new GzipTrail();
    const late = new GzipTrail();
    early.add(gzipFragment(': ok\n\n'));
    early.add(shared);
    late.add(shared);
    expect(gunzipSync(Buffer.concat([GZIP_HEADER, gzipFragment(': ok\n\n').bytes, shared.bytes, early.end()])).toString()).toBe(': ok\n\nid: e-2\ndata: two\n\n');
    expect(gunzipSync(Buffer.concat([GZIP_HEADER, shared.bytes, late.end()])).toString()).toBe('id: e-2\ndata: two\n\n');
    expect(early.end()).not.toEqual(late.end());
  });

  it('an empty stream (header and trailer only) is valid', () => {
    expect(gunzipSync(stream([])).length).toBe(0);
  });
});
