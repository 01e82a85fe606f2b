/**
 * The Redis keys of one stream. Every key of a stream shares the hash tag `{prefix:stream}`, so
 * that a Redis Cluster keeps them on one shard and one script may touch them all (the append
 * script reads the lease and the idempotency key, and writes the meta hash and the log).
 *
 * | key                         | type   | holds                                                        |
 * |-----------------------------|--------|--------------------------------------------------------------|
 * | `{p:s}:meta`                | hash   | `epoch`, `seq` (the newest element's), `pageElements`        |
 * | `{p:s}:log`                 | stream | one entry per element, id `<seq>-0`, field `r`: the record  |
 * | `{p:s}:lease`               | string | the token of the instance that runs the stream's source     |
 * | `{p:s}:idem:<key>`          | string | `<epoch> <seq> <fingerprint>` of an ingest Idempotency-Key  |
 * | `{p:s}:channels`            | hash   | Solid notification channels by id (JSON)                     |
 */
export interface StreamKeys {
  readonly meta: string;
  readonly log: string;
  readonly lease: string;
  readonly channels: string;
  /** The key of an ingest request's `Idempotency-Key`. */
  idempotency(key: string): string;
}

export function streamKeys(prefix: string, streamId: string): StreamKeys {
  const tag = `{${prefix}:${streamId}}`;
  return {
    meta: `${tag}:meta`,
    log: `${tag}:log`,
    lease: `${tag}:lease`,
    channels: `${tag}:channels`,
    idempotency: (key) => `${tag}:idem:${key}`,
  };
}
