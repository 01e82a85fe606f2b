import { LRUCache } from 'lru-cache';
import type { IngestAnswer } from './ingest-endpoint.js';

export type IdempotencyEntry =
  | { readonly state: 'pending' }
  | { readonly state: 'done'; readonly fingerprint: string; readonly answer: IngestAnswer };

/**
 * `Idempotency-Key` answers of one ingest stream (draft-ietf-httpapi-idempotency-key-header): a
 * key is claimed before the body is read, so that a retry sent while the first request uploads
 * is told so; it keeps the first successful answer, or is released for a refused request (which
 * may be corrected and sent again). Bounded: `maxKeys` entries for `ttlMs` each.
 *
 * The keys outlive the process: each is stored with its element in the log, and `restore` puts
 * back, at start-up, those of the elements still within `ttlMs` (see `restoreIdempotencyKeys`).
 */
export class IdempotencyKeys {
  readonly #entries: LRUCache<string, IdempotencyEntry>;
  readonly #ttlMs: number;

  constructor(maxKeys: number, ttlMs: number) {
    this.#ttlMs = ttlMs;
    this.#entries = new LRUCache<string, IdempotencyEntry>({ max: Math.max(1, maxKeys), ttl: ttlMs });
  }

  get(key: string): IdempotencyEntry | undefined {
    return this.#entries.get(key);
  }

  /** Takes `key` for a request in progress; returns what it held already instead, if anything. */
  claim(key: string): IdempotencyEntry | undefined {
    const held = this.#entries.get(key);
    if (held === undefined) this.#entries.set(key, { state: 'pending' });
    return held;
  }

  /** Keeps the answer of the request that claimed `key`. */
  complete(key: string, fingerprint: string, answer: IngestAnswer): void {
    this.#entries.set(key, { state: 'done', fingerprint, answer });
  }

  /**
   * Puts back a key kept before a restart, for what remains of its time to live from
   * `storedAtMs`; false for one that expired (skipped). Call in the order the keys were stored.
   */
  restore(key: string, fingerprint: string, answer: IngestAnswer, storedAtMs: number, nowMs: number = Date.now()): boolean {
    const remainingMs = this.#ttlMs - (nowMs - storedAtMs);
    if (remainingMs <= 0) return false;
    this.#entries.set(key, { state: 'done', fingerprint, answer }, { ttl: Math.min(this.#ttlMs, remainingMs) });
    return true;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Frees `key` if its request did not complete. */
  release(key: string): void {
    if (this.#entries.get(key)?.state === 'pending') this.#entries.delete(key);
  }
}
