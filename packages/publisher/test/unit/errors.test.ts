import { describe, expect, it } from 'vitest';
import { echoed, MAX_ECHOED_CHARS, TRUNCATION_MARK } from '../../src/errors.js';

describe('echoed', () => {
  it('keeps a string of at most MAX_ECHOED_CHARS whole', () => {
    const exact = 'x'.repeat(MAX_ECHOED_CHARS);
    expect(echoed(exact)).toBe(exact);
    expect(echoed('')).toBe('');
  });

  it('cuts a longer one to its first MAX_ECHOED_CHARS characters and marks the cut', () => {
    expect(echoed('x'.repeat(15_000))).toBe(`${'x'.repeat(MAX_ECHOED_CHARS)}${TRUNCATION_MARK}`);
    expect(echoed('abcdef', 3)).toBe(`abc${TRUNCATION_MARK}`);
  });

  it('never cuts a surrogate pair or a %XX escape in two', () => {
    expect(echoed('ab\u{1F600}cd', 3)).toBe(`ab${TRUNCATION_MARK}`);
    expect(echoed('ab%E2%80%A6', 4)).toBe(`ab${TRUNCATION_MARK}`);
    expect(echoed('ab%E2%80%A6', 6)).toBe(`ab%E2${TRUNCATION_MARK}`);
    expect(echoed('ab%E2%80%A6', 5)).toBe(`ab%E2${TRUNCATION_MARK}`);
  });

  it('marks with URI characters only, so that a cut URL is still a URI reference', () => {
    expect(TRUNCATION_MARK).toMatch(/^[A-Za-z0-9\-._~!$&'()*+,;=:@/?]+$/);
  });
});
