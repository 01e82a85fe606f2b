import { LRUCache } from 'lru-cache';
import { elementId } from '@rdf-stream/protocol';
import type { PublisherConfig } from '../../config/config-schema.js';
import type { EventLog } from '../../log/event-log.js';

/** A stored ingest answer, replayed for a retried request with the same `Idempotency-Key`. */
export interface IngestAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

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

/** The 201 of an ingested element: what the first request gets, and every replay of its key. */
export function ingestAnswer(epoch: string, element: { readonly seq: number; readonly graph: string; readonly generatedAt: Date }): IngestAnswer {
  return {
    status: 201,
    headers: { location: element.graph, 'content-type': 'application/json' },
    body: JSON.stringify({ id: elementId(epoch, element.seq), seq: element.seq, element: element.graph, generatedAt: element.generatedAt.toISOString() }),
  };
}

/**
 * Start-up: puts back the `Idempotency-Key`s stored with the stream's newest elements, those
 * still within `idempotencyKeyTtlSeconds` among the newest `idempotencyKeysRetained` elements, so
 * that a retry after a restart (`kill -9` included) gets its element, not a second one: also
 * the retry of a request whose element was stored but whose answer never left. Resolves with
 * how many keys were put back.
 */
export async function restoreIdempotencyKeys(
  endpoint: { readonly idempotency: IdempotencyKeys },
  log: EventLog,
  config: Pick<PublisherConfig, 'idempotencyKeyTtlSeconds' | 'idempotencyKeysRetained'>,
  nowMs: number = Date.now(),
): Promise<number> {
  const ttlMs = config.idempotencyKeyTtlSeconds * 1000;
  const stamped = await log.stampedElements(nowMs - ttlMs, config.idempotencyKeysRetained);
  let restored = 0;
  for (const element of stamped) {
    const { key, fingerprint } = element.idempotency;
    if (endpoint.idempotency.restore(key, fingerprint, ingestAnswer(log.epoch, element), element.generatedAt.getTime(), nowMs)) restored++;
  }
  return restored;
}
