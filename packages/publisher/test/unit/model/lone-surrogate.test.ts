import { describe, expect, it } from 'vitest';
import { loneSurrogateInJson } from '../../../src/model/lone-surrogate.js';

describe('loneSurrogateInJson', () => {
  it.each([
    ['"a\\ud800b"', 2],
    ['"a\\uDC00"', 2],
    ['"\\ud800\\ud800\\udc00"', 1],
    ['"\\ud83d"', 1],
    ['"\\ud83d\\u0041"', 1],
    ['{"k\\udbff": 1}', 3],
    ['["ok", "\\\\", "\\ud800"]', 14],
    ['"a\ud800b"', 2],
    ['"\udc00\ud83d\ude00"', 1],
  ])('%j: the first lone surrogate is at %i', (text, offset) => {
    expect(loneSurrogateInJson(text)).toBe(offset);
  });

  it.each([
    '"a\\ud83d\\ude00b"',
    '"\\uD83D\\uDE00"',
    '"a\u{1F600}b"',
    '"\\\\ud800"',
    '"\\\\\\\\ud800"',
    '"\\u0041\\n\\"\\/"',
    '{"@id": "https://example.org/s", "p": [1, true, null]}',
  ])('%j has none', (text) => {
    expect(loneSurrogateInJson(text)).toBeUndefined();
  });

  it('agrees with the string JSON.parse makes of the text', () => {
    for (const text of ['"\\ud800"', '"\\ud83d\\ude00"', '"\\\\ud800"', '"\\udc00\\ud800"', '"x\\ud800\\\\udc00"']) {
      const parsed = JSON.parse(text) as string;
      const wellFormed = !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(parsed);
      expect(loneSurrogateInJson(text) === undefined, text).toBe(wellFormed);
    }
  });
});
