import { describe, expect, it } from 'vitest';
import { codedEntityTag, entityTag, ifNoneMatchHits, ifNoneMatchNamesFile } from '../../../../src/render/headers/etag.js';

describe('entityTag', () => {
  it('differs per element, format, coding and log epoch', () => {
    const tags = new Set([
      entityTag('e1', 1, 'turtle'),
      entityTag('e1', 2, 'turtle'),
      entityTag('e1', 1, 'jsonld'),
      entityTag('e1', 1, 'turtle', 'gzip'),
      entityTag('e2', 1, 'turtle'),
    ]);
    expect(tags.size).toBe(5);
    expect(entityTag('e1', 1, 'turtle')).toBe('"e1-1-turtle"');
  });
});

describe('ifNoneMatchHits', () => {
  it('matches the same element and format in any coding (weak comparison)', () => {
    expect(ifNoneMatchHits('"e1-3-turtle"', 'e1', 3, 'turtle')).toBe(true);
    expect(ifNoneMatchHits('"e1-3-turtle-gzip"', 'e1', 3, 'turtle')).toBe(true);
    expect(ifNoneMatchHits('W/"e1-3-turtle-br"', 'e1', 3, 'turtle')).toBe(true);
    expect(ifNoneMatchHits('"x", "e1-3-turtle"', 'e1', 3, 'turtle')).toBe(true);
    expect(ifNoneMatchHits('*', 'e1', 3, 'turtle')).toBe(true);
  });

  it('does not match another element, format, epoch, or a tag that only shares a prefix', () => {
    expect(ifNoneMatchHits('"e1-3-turtle"', 'e1', 4, 'turtle')).toBe(false);
    expect(ifNoneMatchHits('"e1-3-turtle"', 'e1', 3, 'trig')).toBe(false);
    expect(ifNoneMatchHits('"e0-3-turtle"', 'e1', 3, 'turtle')).toBe(false);
    expect(ifNoneMatchHits('"e1-31-turtle"', 'e1', 3, 'turtle')).toBe(false);
    expect(ifNoneMatchHits(undefined, 'e1', 3, 'turtle')).toBe(false);
    expect(ifNoneMatchHits('', 'e1', 3, 'turtle')).toBe(false);
  });
});

describe('codedEntityTag and ifNoneMatchNamesFile', () => {
  it('tags each coding of a file apart, and revalidates any of them against any', () => {
    expect([codedEntityTag('abc', 'identity'), codedEntityTag('abc', 'br'), codedEntityTag('abc', 'gzip')]).toEqual(['"abc"', '"abc-br"', '"abc-gzip"']);
    for (const held of ['"abc"', '"abc-br"', 'W/"abc-gzip"', '"other", "abc-br"', '*']) expect(ifNoneMatchNamesFile(held, 'abc'), held).toBe(true);
    for (const held of [undefined, '', '"abd"', '"ab"', '"abc', '"other-br"']) expect(ifNoneMatchNamesFile(held, 'abc'), String(held)).toBe(false);
  });
});
