import { createHash, timingSafeEqual } from 'node:crypto';
import { elementId } from '@rdf-stream/protocol';
import type { PublisherConfig } from '../../config/config-schema.js';
import type { EventLog } from '../../log/event-log.js';
import type { StreamConfig } from '../../config/stream-config.js';
import { bundledShapesFile } from '../../model/bundled-context.js';
import { ThreadedShapeValidator } from '../../model/threaded-shape-validator.js';
import { IdempotencyKeys } from './idempotency-keys.js';

/** A stored ingest answer, replayed for a retried request with the same `Idempotency-Key`. */
export interface IngestAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What the ingest route needs of one ingest stream. */
export interface IngestEndpoint {
  readonly streamId: string;
  /** SHA-256 of the bearer token: compared in constant time, the token itself is not kept here. */
  readonly tokenDigest: Buffer;
  /** The stream's SHACL shapes, validated in a worker thread; null when the stream has none. */
  readonly validator: ThreadedShapeValidator | null;
  /** Bounded by `idempotencyKeysRetained` entries and `idempotencyKeyTtlSeconds`. */
  readonly idempotency: IdempotencyKeys;
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
  endpoint: Pick<IngestEndpoint, 'idempotency'>,
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

export const digestToken = (token: string) => createHash('sha256').update(token, 'utf8').digest();

export function createIngestEndpoint(stream: StreamConfig, config: PublisherConfig): IngestEndpoint {
  if (stream.source.kind !== 'ingest') throw new Error(`Stream "${stream.id}" is not an ingest stream`);
  const shape = stream.shape;
  return {
    streamId: stream.id,
    tokenDigest: digestToken(stream.source.token),
    validator:
      shape.kind === 'none'
        ? null
        : new ThreadedShapeValidator(shape.kind === 'file' ? shape.path : bundledShapesFile(), config.ingestMaxPendingValidations),
    idempotency: new IdempotencyKeys(config.idempotencyKeysRetained, config.idempotencyKeyTtlSeconds * 1000),
  };
}

/**
 * Which ingest stream a bearer token belongs to. Every endpoint's digest is compared (in constant
 * time), whatever matches first, so that timing tells nothing about the tokens.
 */
export function tokenOwner(endpoints: Iterable<IngestEndpoint>, token: string): string | undefined {
  const digest = digestToken(token);
  let owner: string | undefined;
  for (const endpoint of endpoints) {
    if (timingSafeEqual(digest, endpoint.tokenDigest) && owner === undefined) owner = endpoint.streamId;
  }
  return owner;
}
