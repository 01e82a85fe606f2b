import { randomBytes } from 'node:crypto';
import { createClient, type RedisClientType } from '@redis/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ChannelRecord, ChannelStore } from '../../src/publish/notifications/channel-store.js';
import { MemoryChannelStore } from '../../src/publish/notifications/memory-channel-store.js';
import { RedisChannelStore } from '../../src/publish/notifications/redis-channel-store.js';
import { PrivateRedis } from '../support/private-redis.js';

/** For an end that no event announces (Redis expires a key on its own clock): checked every 10 ms. */
const patience = { timeout: 10_000, interval: 10 };

let redis: PrivateRedis;
let client: RedisClientType;
beforeAll(async () => {
  redis = await PrivateRedis.start();
  client = createClient({ url: redis.url });
  await client.connect();
});
afterAll(async () => {
  client.destroy();
  await redis.close();
});

const record = (extra: Partial<ChannelRecord> = {}): ChannelRecord => ({
  id: randomBytes(16).toString('base64url'),
  channelType: 'EventSourceChannel2023',
  topic: { iri: 'http://127.0.0.1:8080/streams/parking', streamId: 'parking', kind: 'stream' },
  endAtMs: Date.now() + 60_000,
  rateMs: undefined,
  knownState: undefined,
  ...extra,
});

describe.each([
  ['memory', () => new MemoryChannelStore()],
  // Each case on its own key prefix: the stores of one case do not see another's channels.
  ['Redis (Valkey)', () => new RedisChannelStore(client, `test-${randomBytes(6).toString('hex')}`)],
] as Array<[string, () => ChannelStore]>)('ChannelStore in %s', (_name, makeStore) => {
  it('stores, reads and deletes a channel, every member as written', async () => {
    const store = makeStore();
    const channel = record({ channelType: 'WebSocketChannel2023', topic: { iri: 'http://h/streams/parking/latest', streamId: 'parking', kind: 'latest' }, rateMs: 2_000, knownState: 'e1-3' });
    expect(await store.create(channel, 10)).toBe(true);
    expect(await store.get(channel.id)).toEqual(channel);
    const bare = record();
    expect(await store.create(bare, 10)).toBe(true);
    expect(await store.get(bare.id)).toEqual(bare);
    expect(await store.count()).toBe(2);
    expect(await store.stored([channel.id, bare.id, 'never'])).toEqual(new Set([channel.id, bare.id]));
    expect(await store.delete(channel.id)).toBe(true);
    expect(await store.delete(channel.id)).toBe(false);
    expect(await store.get(channel.id)).toBeUndefined();
    expect(await store.count()).toBe(1);
    expect(await store.stored([channel.id, bare.id])).toEqual(new Set([bare.id]));
  });

  it('records the state the receiver is known to have, and never brings a deleted channel back with it', async () => {
    const store = makeStore();
    const channel = record({ knownState: 'e1-1' });
    await store.create(channel, 10);
    await store.setKnownState(channel.id, 'e1-7');
    expect((await store.get(channel.id))?.knownState).toBe('e1-7');
    await store.delete(channel.id);
    await store.setKnownState(channel.id, 'e1-8');
    expect(await store.get(channel.id)).toBeUndefined();
    expect(await store.count()).toBe(0);
  });

  it('refuses a channel beyond the limit, counting only unended channels', async () => {
    const store = makeStore();
    const ending = record({ endAtMs: Date.now() + 200 });
    expect(await store.create(ending, 2)).toBe(true);
    expect(await store.create(record(), 2)).toBe(true);
    expect(await store.create(record(), 2)).toBe(false);
    // At its end the channel is gone for every reader, and its place is free again.
    await vi.waitUntil(async () => (await store.get(ending.id)) === undefined, patience);
    expect(await store.stored([ending.id])).toEqual(new Set());
    expect(await store.count()).toBe(1);
    expect(await store.create(record(), 2)).toBe(true);
  });
});

describe('RedisChannelStore', () => {
  it('keeps the limit when instances create at once: the count and the write are one script', async () => {
    const prefix = `test-${randomBytes(6).toString('hex')}`;
    const instances = [new RedisChannelStore(client, prefix), new RedisChannelStore(client, prefix), new RedisChannelStore(client, prefix)];
    const created = await Promise.all(Array.from({ length: 30 }, (_, index) => instances[index % 3]!.create(record(), 7)));
    expect(created.filter(Boolean)).toHaveLength(7);
    expect(await instances[0]!.count()).toBe(7);
  });

  it('expires the channel key itself at its end (PEXPIREAT), read or not', async () => {
    const prefix = `test-${randomBytes(6).toString('hex')}`;
    const store = new RedisChannelStore(client, prefix);
    const channel = record({ endAtMs: Date.now() + 200 });
    await store.create(channel, 10);
    const key = `{${prefix}}:channel:${channel.id}`;
    expect(Number(await client.pTTL(key))).toBeGreaterThan(0);
    await vi.waitUntil(async () => (await client.exists(key)) === 0, patience);
  });
});
