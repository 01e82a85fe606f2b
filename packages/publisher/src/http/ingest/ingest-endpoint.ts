import { createHash, timingSafeEqual } from 'node:crypto';
import type { PublisherConfig } from '../../config/config-schema.js';
import type { StreamConfig } from '../../config/stream-config.js';
import { bundledShapesFile } from '../../model/bundled-context.js';
import { ThreadedShapeValidator } from '../../model/threaded-shape-validator.js';
import { IdempotencyKeys } from './idempotency-keys.js';

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
