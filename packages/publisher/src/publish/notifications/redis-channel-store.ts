import type { RedisClientType } from '@redis/client';
import { type Clock, realClock } from '../../clock-and-logger.js';
import { type ChannelKeys, channelKeys } from '../../log/redis/redis-keys.js';
import { type ChannelRecord, type ChannelStore, ChannelStoreUnavailableError } from './channel-store.js';
import { type ChannelType, EVENT_SOURCE_CHANNEL, WEB_SOCKET_CHANNEL } from './service-description.js';

/** What the store needs of a node-redis client (`createClient()` from 'redis', connected by its owner). */
export type ChannelStoreClient = Pick<RedisClientType, 'sendCommand' | 'isReady'>;

export interface RedisChannelStoreOptions {
  /** Milliseconds a command may take before the store is deemed unavailable (default `DEFAULT_CHANNEL_STORE_TIMEOUT_MS`). */
  readonly commandTimeoutMs?: number;
  /** Only to drop a record whose end has passed on this instance's clock before Redis expired it. */
  readonly clock?: Clock;
}

/** A subscription waits at most this long (milliseconds) for Redis before it is answered 503. */
export const DEFAULT_CHANNEL_STORE_TIMEOUT_MS = 1_000;

/**
 * Ids per `stored` script call: Lua's `unpack` of the arguments is bounded by its C stack
 * (8 000 slots), and an instance may hold up to `maxNotificationChannels` connections.
 */
const STORED_BATCH_IDS = 1_000;

/** The server's time in milliseconds, and the removal of the ended channels from the index. */
const DROP_ENDED = `
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)`;

/** KEYS: index, channel. ARGV: id, maxChannels, endAtMs, field, value, …. 1 if created, 0 if full. */
const CREATE = `${DROP_ENDED}
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[2], unpack(ARGV, 4))
redis.call('PEXPIREAT', KEYS[2], ARGV[3])
return 1`;

/** KEYS: index. The unended channels. */
const COUNT = `${DROP_ENDED}
return redis.call('ZCARD', KEYS[1])`;

/** KEYS: index. ARGV: ids. Those of the ids still in the index after the ended ones are dropped. */
const STORED = `${DROP_ENDED}
local scores = redis.call('ZMSCORE', KEYS[1], unpack(ARGV))
local stored = {}
for i = 1, #ARGV do
  if scores[i] then stored[#stored + 1] = ARGV[i] end
end
return stored`;

/** KEYS: index, channel. ARGV: id. 1 if the channel was stored. */
const DELETE = `
redis.call('ZREM', KEYS[1], ARGV[1])
return redis.call('DEL', KEYS[2])`;

/** KEYS: channel. ARGV: state. HSET on a missing key would create it without its expiry: only an existing channel is updated. */
const SET_KNOWN_STATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'knownState', ARGV[1]) end
return 0`;

const FIELDS = ['type', 'topic', 'streamId', 'kind', 'endAtMs', 'rateMs', 'knownState'] as const;
const channelTypes = new Set<string>([EVENT_SOURCE_CHANNEL, WEB_SOCKET_CHANNEL]);

/**
 * The channels in a Redis (or Valkey) shared by every instance of the publisher: a channel
 * subscribed to on one instance is received from on any other, and outlives restarts.
 *
 * One key per channel, a hash expiring at the channel's end (PEXPIREAT), rather than one hash
 * of every channel per stream: Redis drops an ended channel by itself (fields of a hash do not
 * expire before Redis 7.4 and Valkey 9), a read is one `HMGET` of a key the channel id names
 * (`receiveFrom` does not name the stream), and a `knownState` update touches one channel. The
 * index, a sorted set of ids by end, makes `maxNotificationChannels` one atomic script over all
 * instances (drop the ended, count, add) at O(log N) per channel, and answers "which of the
 * channels I hold are still there?" in one request. Both keys share one hash tag (`channelKeys`).
 * Ends are compared with the server's clock in scripts; an instance's own timer ends a
 * connection at `endAtMs` on its clock, so a skew between them shifts the end by that skew.
 *
 * The client is its owner's (connected, reconnecting and closed by it). While it is not ready,
 * or a command takes longer than `commandTimeoutMs`, every method rejects with
 * `ChannelStoreUnavailableError` instead of waiting in the client's offline queue.
 */
export class RedisChannelStore implements ChannelStore {
  readonly #client: ChannelStoreClient;
  readonly #keys: ChannelKeys;
  readonly #timeoutMs: number;
  readonly #clock: Clock;

  constructor(client: ChannelStoreClient, keyPrefix: string, options: RedisChannelStoreOptions = {}) {
    this.#client = client;
    this.#keys = channelKeys(keyPrefix);
    this.#timeoutMs = options.commandTimeoutMs ?? DEFAULT_CHANNEL_STORE_TIMEOUT_MS;
    this.#clock = options.clock ?? realClock;
  }

  async create(record: ChannelRecord, maxChannels: number): Promise<boolean> {
    const fields: string[] = ['type', record.channelType, 'topic', record.topic.iri, 'streamId', record.topic.streamId, 'kind', record.topic.kind, 'endAtMs', String(record.endAtMs)];
    if (record.rateMs !== undefined) fields.push('rateMs', String(record.rateMs));
    if (record.knownState !== undefined) fields.push('knownState', record.knownState);
    const { index, channel } = this.#keys;
    const created = await this.#eval(CREATE, [index, channel(record.id)], [record.id, String(maxChannels), String(record.endAtMs), ...fields]);
    return Number(created) === 1;
  }

  async get(id: string): Promise<ChannelRecord | undefined> {
    const values = (await this.#send(['HMGET', this.#keys.channel(id), ...FIELDS])) as ReadonlyArray<unknown>;
    const [type, topic, streamId, kind, endAt, rate, knownState] = values.map((value) => (value === null || value === undefined ? undefined : String(value)));
    const endAtMs = Number(endAt);
    const rateMs = rate === undefined ? undefined : Number(rate);
    // A record this version cannot read is no channel it can serve.
    if (type === undefined || !channelTypes.has(type) || topic === undefined || streamId === undefined) return undefined;
    if ((kind !== 'stream' && kind !== 'latest') || !Number.isFinite(endAtMs) || (rateMs !== undefined && !Number.isFinite(rateMs))) return undefined;
    if (endAtMs <= this.#clock.now()) return undefined;
    return { id, channelType: type as ChannelType, topic: { iri: topic, streamId, kind }, endAtMs, rateMs, knownState };
  }

  async delete(id: string): Promise<boolean> {
    return Number(await this.#eval(DELETE, [this.#keys.index, this.#keys.channel(id)], [id])) === 1;
  }

  async count(): Promise<number> {
    return Number(await this.#eval(COUNT, [this.#keys.index], []));
  }

  async stored(ids: readonly string[]): Promise<Set<string>> {
    const batches: Array<Promise<unknown>> = [];
    for (let start = 0; start < ids.length; start += STORED_BATCH_IDS) {
      batches.push(this.#eval(STORED, [this.#keys.index], ids.slice(start, start + STORED_BATCH_IDS)));
    }
    const stored = new Set<string>();
    for (const batch of await Promise.all(batches)) for (const id of batch as ReadonlyArray<unknown>) stored.add(String(id));
    return stored;
  }

  async setKnownState(id: string, state: string): Promise<void> {
    await this.#eval(SET_KNOWN_STATE, [this.#keys.channel(id)], [state]);
  }

  #eval(script: string, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    return this.#send(['EVAL', script, String(keys.length), ...keys, ...args]);
  }

  async #send(args: readonly string[]): Promise<unknown> {
    if (!this.#client.isReady) throw new ChannelStoreUnavailableError();
    try {
      return await this.#client.sendCommand(args, { timeout: this.#timeoutMs });
    } catch (error) {
      throw new ChannelStoreUnavailableError({ cause: error });
    }
  }
}

/** The store of the channels of every instance that shares `client`'s server and `keyPrefix` (`redisKeyPrefix`). */
export const redisChannelStore = (client: ChannelStoreClient, keyPrefix: string, options?: RedisChannelStoreOptions): ChannelStore =>
  new RedisChannelStore(client, keyPrefix, options);
