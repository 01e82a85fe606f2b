import { describe, expect, it } from 'vitest';
import { jsonNestingBeyond } from '../../../src/model/json-nesting.js';

describe('jsonNestingBeyond', () => {
  it('counts the nesting of arrays and objects: the limit itself passes, one more level is refused at its bracket', () => {
    const nested = '{"a": [1, {"b": [[]]}]}'; // 5 levels
    expect(jsonNestingBeyond(nested, 5)).toBeUndefined();
    expect(jsonNestingBeyond(nested, 4)).toBe(nested.indexOf('[[') + 1);
    expect(jsonNestingBeyond('[], [], {}', 1)).toBeUndefined();
    expect(jsonNestingBeyond('"just a string"', 1)).toBeUndefined();
  });

  it('ignores brackets in strings, escaped quotes included', () => {
    expect(jsonNestingBeyond(`["${'['.repeat(100)}"]`, 1)).toBeUndefined();
    expect(jsonNestingBeyond(`["\\"${'['.repeat(100)}", "\\\\"]`, 1)).toBeUndefined();
    expect(jsonNestingBeyond('["\\\\", [[]]]', 2)).toBe(8);
  });

  it('never counts less than a tolerant reader could recurse into', () => {
    // A string ends at a raw line break, as jsonc-parser's scanner ends it.
    expect(jsonNestingBeyond(`"unterminated\n${'['.repeat(10)}`, 5)).toBe(19);
    // Comments hide their quotes; a closing bracket closes only the bracket it matches.
    expect(jsonNestingBeyond(`/* " */ ${'['.repeat(10)}`, 5)).toBe(13);
    expect(jsonNestingBeyond(`// "\n${'['.repeat(10)}`, 5)).toBe(10);
    expect(jsonNestingBeyond('[},'.repeat(10), 5)).toBe(15);
    expect(jsonNestingBeyond(']]]]' + '['.repeat(10), 5)).toBe(9);
  });

  it('takes one pass, without recursion: ten million levels are refused at once', () => {
    const text = '['.repeat(10_000_000);
    const started = performance.now();
    expect(jsonNestingBeyond(text, 64)).toBe(64);
    expect(jsonNestingBeyond(`"${text}"`, 64)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
