import { describe, expect, it } from 'vitest';
import { parseAccept, preferredMediaType } from '../../../../src/render/headers/media-range.js';

describe('parseAccept', () => {
  it('reads type, subtype, charset and weight, lower-cased, in header order', () => {
    expect(parseAccept('Text/Turtle;Charset="UTF-8";q=0.5, */*;q=0.1')).toEqual([
      { type: 'text', subtype: 'turtle', charset: 'utf-8', weight: 0.5, order: 0 },
      { type: '*', subtype: '*', charset: undefined, weight: 0.1, order: 1 },
    ]);
  });

  it('keeps commas and semicolons inside a quoted value in the value', () => {
    const ranges = parseAccept('application/ld+json;profile="http://www.w3.org/ns/json-ld#expanded, http://x/a;b";q=0.8, text/turtle;q=0.2');
    expect(ranges.map(({ subtype, weight }) => [subtype, weight])).toEqual([
      ['ld+json', 0.8],
      ['turtle', 0.2],
    ]);
  });

  it('unescapes a quoted charset (RFC 9110 §5.6.4)', () => {
    expect(parseAccept('text/turtle;charset="utf\\-8"')[0]?.charset).toBe('utf-8');
  });

  it.each([
    ['text', 'no subtype'],
    ['*/turtle', 'a wildcard type with a concrete subtype'],
    ['text/turtle/x', 'two slashes'],
    ['text/tur tle', 'a space in the subtype'],
    ['text/turtle;q=2', 'a weight above 1'],
    ['text/turtle;q=0.0001', 'a weight with four decimals'],
    ['text/turtle;q=abc', 'a weight that is not a number'],
    ['text/turtle;q=', 'an empty weight'],
  ])('leaves out %j (%s)', (accept) => {
    expect(parseAccept(accept)).toEqual([]);
  });

  it('leaves out a malformed member and keeps the others', () => {
    expect(parseAccept('text, application/trig;q=0.3').map(({ subtype }) => subtype)).toEqual(['trig']);
  });

  it('ignores a parameter without a value', () => {
    expect(parseAccept('text/turtle;level;q=0.4')).toEqual([{ type: 'text', subtype: 'turtle', charset: undefined, weight: 0.4, order: 0 }]);
  });
});

describe('preferredMediaType', () => {
  const offered = ['text/turtle', 'application/trig', 'application/ld+json'];
  const best = (accept: string) => preferredMediaType(parseAccept(accept), offered);

  it('the most specific matching range sets the weight of a type', () => {
    expect(best('*/*;q=0.9, text/turtle;q=0.1, application/trig;q=0.5')).toBe('application/ld+json');
    expect(best('text/turtle;charset=utf-8;q=0.1, text/turtle;q=1, application/trig;q=0.5')).toBe('application/trig');
  });

  it('among equal weights: the more specific match, then the client order, then the offered order', () => {
    expect(best('*/*, application/ld+json')).toBe('application/ld+json');
    expect(best('application/ld+json, application/trig')).toBe('application/ld+json');
    expect(best('application/*')).toBe('application/trig');
  });

  it('a parameter other than charset and q neither matches nor refuses', () => {
    expect(best('application/ld+json;profile="http://www.w3.org/ns/json-ld#flattened"')).toBe('application/ld+json');
    expect(best('application/ld+json;profile="urn:x";q=0, application/ld+json;q=0.7, text/turtle;q=0.6')).toBe('application/ld+json');
  });

  it('a charset other than UTF-8 matches nothing we send', () => {
    expect(best('text/turtle;charset=iso-8859-1')).toBeUndefined();
    expect(best('*/*;charset=us-ascii')).toBeUndefined();
    expect(best('text/turtle;charset=iso-8859-1, */*;q=0.1')).toBe('text/turtle');
  });

  it('weight 0 refuses', () => {
    expect(best('text/turtle;q=0')).toBeUndefined();
    expect(best('*/*, text/turtle;q=0, application/*;q=0')).toBeUndefined();
  });
});
