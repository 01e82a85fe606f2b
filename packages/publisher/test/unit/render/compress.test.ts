import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { brotliWindowBits, compressOnce } from '../../../src/render/compress.js';

/** The window a brotli stream declares (WBITS, RFC 7932 §9.1: its first 1–7 bits, read from the lowest). */
function declaredWindowBits(stream: Buffer): number {
  let position = 0;
  const bits = (count: number) => {
    let value = 0;
    for (let index = 0; index < count; index++, position++) value |= (((stream[position >> 3] ?? 0) >> (position & 7)) & 1) << index;
    return value;
  };
  if (bits(1) === 0) return 16;
  const large = bits(3);
  if (large !== 0) return 17 + large;
  const small = bits(3);
  return small === 0 ? 17 : 8 + small;
}

/** Turtle-like text of `bytes` bytes: repetitive, as elements are, but not one repeated byte. */
function turtleOf(bytes: number): Buffer {
  const lines: string[] = [];
  let length = 0;
  for (let index = 0; length < bytes; index++) {
    const line = `<https://example.org/observations/${index}> sosa:hasSimpleResult "${(index * 7919) % 1000}"^^xsd:integer .\n`;
    lines.push(line);
    length += line.length;
  }
  return Buffer.from(lines.join('').slice(0, bytes));
}

describe('brotliWindowBits', () => {
  it('is the smallest window that holds the body (2^bits − 16 bytes), within brotli’s 10–22', () => {
    expect(brotliWindowBits(0)).toBe(10);
    expect(brotliWindowBits(1_008)).toBe(10);
    expect(brotliWindowBits(1_009)).toBe(11);
    expect(brotliWindowBits(8_176)).toBe(13);
    expect(brotliWindowBits(8_177)).toBe(14);
    expect(brotliWindowBits(4 * 1_048_576 - 16)).toBe(22);
    expect(brotliWindowBits(64 * 1_048_576)).toBe(22);
  });
});

describe('compressOnce', () => {
  it.each([0, 1, 1_009, 5_575, 8_176, 8_177, 13_490, 32_050, 5 * 1_048_576])(
    'compresses a %i-byte body so that br and gzip decode to it, brotli with the window fitted to it',
    async (bytes) => {
      const body = turtleOf(bytes);
      const encoded = await compressOnce(body);
      expect(encoded.identity).toBe(body);
      expect(brotliDecompressSync(encoded.br).equals(body)).toBe(true);
      expect(gunzipSync(encoded.gzip).equals(body)).toBe(true);
      const window = declaredWindowBits(encoded.br);
      expect(window).toBe(brotliWindowBits(bytes));
      if (window > 10) expect(2 ** (window - 1) - 16).toBeLessThan(bytes);
    },
  );
});
