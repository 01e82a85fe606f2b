/**
 * The Redis keys of one stream. Every key of a stream shares the hash tag `{prefix:stream}`, so
 * that a Redis Cluster keeps them on one shard and one script may touch them all (the append
 * script reads the lease and the idempotency key, and writes the meta hash and the log).
 *
 * | key                         | type   | holds                                                        |
 * |-----------------------------|--------|--------------------------------------------------------------|
 * | `{p:s}:meta`                | hash   | `epoch`, `seq` (the newest element's), `pageElements`, `baseUrl` |
 * | `{p:s}:log`                 | stream | one entry per element, id `<seq>-0`, field `r`: the record  |
 * | `{p:s}:lease`               | string | the token of the instance that runs the stream's source     |
 * | `{p:s}:idem:<key>`          | string | `<epoch> <seq> <generatedAtMs> <fingerprint>` of an ingest Idempotency-Key |
 *
 * The Solid notification channels are the publisher's, not a stream's: see `channelKeys`.
 */
export interface StreamKeys {
  readonly meta: string;
  readonly log: string;
  readonly lease: string;
  /** The key of an ingest request's `Idempotency-Key`. */
  idempotency(key: string): string;
}

export function streamKeys(prefix: string, streamId: string): StreamKeys {
  const tag = `{${prefix}:${streamId}}`;
  return {
    meta: `${tag}:meta`,
    log: `${tag}:log`,
    lease: `${tag}:lease`,
    idempotency: (key) => `${tag}:idem:${key}`,
  };
}

/**
 * The Redis keys of the Solid notification channels, all streams together: a channel's
 * `receiveFrom` names no stream, and `maxNotificationChannels` counts every stream's. Their hash
 * tag `{prefix}` is no stream's (a stream's is `{prefix:stream}`), so that one script may count
 * and create on one Redis Cluster shard.
 *
 * | key                    | type       | holds                                                          |
 * |------------------------|------------|----------------------------------------------------------------|
 * | `{p}:channels`         | sorted set | every channel's id, scored by its end (`endAtMs`)              |
 * | `{p}:channel:<id>`     | hash       | one channel's record; the key expires at its end (PEXPIREAT)   |
 */
export interface ChannelKeys {
  readonly index: string;
  channel(id: string): string;
}

export function channelKeys(prefix: string): ChannelKeys {
  const tag = `{${prefix}}`;
  return { index: `${tag}:channels`, channel: (id) => `${tag}:channel:${id}` };
}
