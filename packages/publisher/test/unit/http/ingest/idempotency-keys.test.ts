import { describe, expect, it } from 'vitest';
import { IdempotencyKeys, ingestAnswer, restoreIdempotencyKeys } from '../../../../src/http/ingest/idempotency-keys.js';
import { MemoryEventLog } from '../../../../src/log/memory-event-log.js';
import { loggedElement } from '../../../support/logged-element.js';

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

describe('IdempotencyKeys.restore and restoreIdempotencyKeys (start-up)', () => {
  const nowMs = 1_800_000_100_000;
  const stamp = (seq: number) => ({ key: `key-${seq}`, fingerprint: `print-${seq}` });

  it('puts back a key for what remains of its time to live, and skips one that expired', () => {
    const keys = new IdempotencyKeys(10, 60_000);
    expect(keys.restore('fresh', 'f', answer(1), nowMs - 59_000, nowMs)).toBe(true);
    expect(keys.restore('expired', 'f', answer(2), nowMs - 60_000, nowMs)).toBe(false);
    expect([keys.get('fresh'), keys.get('expired')]).toEqual([{ state: 'done', fingerprint: 'f', answer: answer(1) }, undefined]);
  });

  it('rebuilds the index from the log: the answer of each stamped element, within the TTL and idempotencyKeysRetained (the limit)', async () => {
    const log = new MemoryEventLog(4, { retainedElements: 100, retainedSeconds: 0 }, { epoch: 'testepoch' });
    // Elements 1–6, one a second up to nowMs; all but 3 carry a key.
    for (let seq = 1; seq <= 6; seq++) {
      const element = loggedElement(seq, new Date(nowMs - (6 - seq) * 1000), 'testepoch');
      await log.append(seq === 3 ? element : { ...element, idempotency: stamp(seq) });
    }
    const endpoint = { idempotency: new IdempotencyKeys(10, 60_000) };
    // The newest 4 elements (3–6): keys 4, 5, 6.
    expect(await restoreIdempotencyKeys(endpoint, log, { idempotencyKeyTtlSeconds: 60, idempotencyKeysRetained: 4 }, nowMs)).toBe(3);
    expect(['key-2', 'key-4', 'key-6'].map((key) => endpoint.idempotency.get(key)?.state)).toEqual([undefined, 'done', 'done']);
    const element = (await log.get(6))!;
    expect(endpoint.idempotency.get('key-6')).toEqual({ state: 'done', fingerprint: 'print-6', answer: ingestAnswer('testepoch', element) });
    expect(JSON.parse(ingestAnswer('testepoch', element).body)).toEqual({ id: 'testepoch-6', seq: 6, element: element.graph, generatedAt: element.generatedAt.toISOString() });
    // Only those younger than 2 s (elements 5 and 6; element 4's key expires as it is read).
    const recent = { idempotency: new IdempotencyKeys(10, 2_000) };
    expect(await restoreIdempotencyKeys(recent, log, { idempotencyKeyTtlSeconds: 2, idempotencyKeysRetained: 100 }, nowMs)).toBe(2);
    expect(['key-4', 'key-5', 'key-6'].map((key) => recent.idempotency.get(key)?.state)).toEqual([undefined, 'done', 'done']);
  });
});
