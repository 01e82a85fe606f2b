import { describe, expect, it } from 'vitest';
import { IdempotencyKeys } from '../../../../src/http/ingest/idempotency-keys.js';

const answer = (seq: number) => ({ status: 201, headers: {}, body: JSON.stringify({ seq }) });

describe('IdempotencyKeys', () => {
  it('claims a new key, tells a second claim that it is pending, and keeps the completed answer', () => {
    const keys = new IdempotencyKeys(10, 60_000);
    expect(keys.claim('k')).toBeUndefined();
    expect(keys.claim('k')).toEqual({ state: 'pending' });
    keys.complete('k', 'fingerprint', answer(1));
    expect(keys.claim('k')).toEqual({ state: 'done', fingerprint: 'fingerprint', answer: answer(1) });
  });

  it('releases a key whose request did not complete, never a completed one', () => {
    const keys = new IdempotencyKeys(10, 60_000);
    keys.claim('refused');
    keys.release('refused');
    expect(keys.get('refused')).toBeUndefined();
    keys.claim('kept');
    keys.complete('kept', 'f', answer(2));
    keys.release('kept');
    expect(keys.get('kept')?.state).toBe('done');
  });

  it('keeps at most maxKeys keys (the limit), dropping the least recently used', () => {
    const keys = new IdempotencyKeys(2, 60_000);
    for (const key of ['a', 'b', 'c']) {
      keys.claim(key);
      keys.complete(key, key, answer(0));
    }
    expect([keys.get('a'), keys.get('b')?.state, keys.get('c')?.state]).toEqual([undefined, 'done', 'done']);
  });
});
