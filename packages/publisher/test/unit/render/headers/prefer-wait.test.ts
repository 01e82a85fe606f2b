import { describe, expect, it } from 'vitest';
import { preferredWaitSeconds } from '../../../../src/render/headers/prefer-wait.js';

describe('preferredWaitSeconds (RFC 7240)', () => {
  it.each([
    ['wait=10', 10],
    ['WAIT = 5', 5],
    ['respond-async, wait=30', 30],
    ['wait="7"', 7],
    ['wait=0', 0],
    [['handling=lenient', 'wait=3'], 3],
  ])('%j → %s', (header, seconds) => {
    expect(preferredWaitSeconds(header)).toBe(seconds);
  });

  it.each([undefined, '', 'wait', 'wait=-1', 'wait=abc', 'wait=1.5', 'wait=99999999999', 'return=minimal'])(
    'ignores %j',
    (header) => {
      expect(preferredWaitSeconds(header)).toBeUndefined();
    },
  );
});
