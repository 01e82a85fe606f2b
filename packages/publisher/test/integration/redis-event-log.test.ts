import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { formatNames } from '@rdf-stream/protocol';
import { IdempotencyKeyTakenError, LogAppendError, LogOpenError, LogSeqConflictError } from '../../src/log/event-log.js';
import { connectRedis, type RedisConnection } from '../../src/log/redis/redis-connection.js';
import { RedisEventLog, type RedisEventLogOptions } from '../../src/log/redis/redis-event-log.js';
import { streamKeys } from '../../src/log/redis/redis-keys.js';
import { freePort } from '../../src/testing.js';
import { loggedElement } from '../support/logged-element.js';
import { PrivateRedis, REDIS_7_0_SERVER } from '../support/private-redis.js';

const silent = { info() {}, warn() {}, error() {}, debug() {} } as unknown as RedisEventLogOptions['logger'];

let server: PrivateRedis;
const open: Array<{ close(): Promise<void> }> = [];
let prefixes = 0;

beforeAll(async () => {
  server = await PrivateRedis.start();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((thing) => thing.close()));
});
afterAll(async () => {
  await server.close();
});

async function client(): Promise<RedisConnection> {
  const connection = await connectRedis(server.url, silent);
  open.push({ close: () => connection.close().catch(() => connection.destroy()) });
  return connection;
}

/** One instance's log of the stream `parking` under `prefix` (two calls with one prefix: two instances of one stream). */
async function instance(prefix: string, overrides: Partial<RedisEventLogOptions> = {}): Promise<RedisEventLog> {
  const log = await RedisEventLog.open({
    streamId: 'parking',
    baseUrl: 'http://127.0.0.1:8080',
    keys: streamKeys(prefix, 'parking'),
    client: await client(),
    formats: formatNames,
    pageElements: 4,
    retention: { retainedElements: 10, retainedSeconds: 0 },
    cacheBytes: 1024 * 1024,
    waitReplicas: 0,
    appendTimeoutMs: 5_000,
    readBlockMs: 200,
    idempotencyTtlMs: 60_000,
    retentionIntervalMs: 60_000,
    logger: silent,
    ...overrides,
  });
  open.unshift(log);
  return log;
}

const newPrefix = () => `test${++prefixes}-${Date.now()}`;
/** The element `log` expects next, as the writer renders it. */
const next = (log: RedisEventLog, extra: Partial<ReturnType<typeof loggedElement>> = {}) => ({ ...loggedElement(log.nextSeq, undefined, log.epoch), ...extra });

/** Resolves once `log` has read up to `seq` (its follower announced it). */
function reached(log: RedisEventLog, seq: number): Promise<void> {
  if (log.latestSeq >= seq) return Promise.resolve();
  return new Promise((resolve) => log.onAppended((latest) => latest >= seq && resolve()));
}

describe('the shared log in Redis Streams (a real Valkey)', () => {
  it('appends dense numbers, reads them back whole, and survives a reopen with the same epoch', async () => {
    const prefix = newPrefix();
    const log = await instance(prefix);
    expect(log.latestSeq).toBe(0);
    for (let seq = 1; seq <= 6; seq++) await log.append(next(log));
    expect(log.latestSeq).toBe(6);
    const read = await log.read(1, 10);
    expect(read.map((element) => element.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(read[2]?.documents.turtle.toString()).toBe('turtle element 3\n');
    const again = await instance(prefix);
    expect(again.epoch).toBe(log.epoch);
    expect(again.latestSeq).toBe(6);
    expect(again.latest()?.documents.ntriples.toString()).toBe('ntriples element 6\n');
    expect((await again.get(4))?.graph).toBe(loggedElement(4, undefined, log.epoch).graph);
    expect(await again.pageStartedAt(2)).toEqual(loggedElement(5).generatedAt);
  });

  it('serves one stream from two instances: each reads what the other appends, and a number taken first is refused', async () => {
    const prefix = newPrefix();
    const a = await instance(prefix);
    const b = await instance(prefix);
    expect(b.epoch).toBe(a.epoch);
    await a.append(next(a));
    await reached(b, 1);
    expect(b.latest()?.seq).toBe(1);
    // Both render element 2 at once: one wins, the other is told the number is taken, nothing of it kept.
    const fromA = a.append(next(a));
    const fromB = b.append(next(b));
    const results = await Promise.allSettled([fromA, fromB]);
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((result) => result.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(LogSeqConflictError);
    await reached(a, 2);
    await reached(b, 2);
    expect((await a.read(1, 10)).map((element) => element.seq)).toEqual([1, 2]);
    // The loser renders again for the next number, and both instances read it.
    const loser = results[0].status === 'rejected' ? a : b;
    await loser.append(next(loser));
    await reached(a, 3);
    await reached(b, 3);
    expect((await b.read(1, 10)).map((element) => element.seq)).toEqual([1, 2, 3]);
  });

  it('refuses an instance whose base URL is not the one the stream was created with: its IRIs would differ', async () => {
    const prefix = newPrefix();
    await instance(prefix);
    await expect(instance(prefix, { baseUrl: 'http://other.example' })).rejects.toThrow(
      new LogOpenError(
        'stream parking: its shared log was created by instances whose base URL is http://127.0.0.1:8080, not http://other.example: every instance of a stream must have the same --base-url (the address clients use), or another --redis-key-prefix',
      ),
    );
  });

  it('keeps at least retainedElements by whole pages, as the file log', async () => {
    const log = await instance(newPrefix(), { retention: { retainedElements: 5, retainedSeconds: 0 } });
    for (let seq = 1; seq <= 13; seq++) await log.append(next(log));
    // Pages of 4: the 5 newest (9…13) start in page 3 (9…12): 1…8 are removed.
    expect(log.oldestSeq).toBe(9);
    expect((await log.read(1, 100)).map((element) => element.seq)).toEqual([9, 10, 11, 12, 13]);
    expect(await log.get(8)).toBeUndefined();
  });

  it('finds an ingest request’s Idempotency-Key from any instance, with its element and fingerprint', async () => {
    const prefix = newPrefix();
    const a = await instance(prefix);
    const b = await instance(prefix);
    const stamp = { key: 'key-1', fingerprint: 'fp-1' };
    await a.append(next(a, { idempotency: stamp }));
    await reached(b, 1);
    const retried = b.append(next(b, { idempotency: stamp }));
    await expect(retried).rejects.toBeInstanceOf(IdempotencyKeyTakenError);
    await expect(retried).rejects.toMatchObject({ epoch: a.epoch, seq: 1, fingerprint: 'fp-1' });
    expect(b.latestSeq).toBe(1);
    expect(await b.stampedElements(0, 10)).toEqual([expect.objectContaining({ seq: 1, idempotency: stamp })]);
  });

  it('refuses the appends of an instance that does not hold the source lease, in the script', async () => {
    const prefix = newPrefix();
    const keys = streamKeys(prefix, 'parking');
    let token: string | undefined = 'token-a';
    const log = await instance(prefix, { fencingToken: () => token });
    const redis = await client();
    await redis.sendCommand(['SET', keys.lease, 'token-a']);
    await log.append(next(log));
    // Another instance took the lease while this one was paused: its append is refused by the server.
    await redis.sendCommand(['SET', keys.lease, 'token-b']);
    await expect(log.append(next(log))).rejects.toMatchObject({ code: 'FENCED' });
    token = undefined;
    await expect(log.append(next(log))).rejects.toMatchObject({ code: 'FENCED' });
    expect((await log.read(1, 10)).map((element) => element.seq)).toEqual([1]);
  });
});

describe('the shared log when its server fails', () => {
  it('reports the server unreachable, keeps what it read, and resumes from its last number after a restart with the append-only file', async () => {
    const own = await PrivateRedis.start();
    try {
      const connection = await connectRedis(own.url, silent);
      const log = await RedisEventLog.open({
        streamId: 'parking', baseUrl: 'http://127.0.0.1:8080', keys: streamKeys('restart', 'parking'), client: connection, formats: formatNames, pageElements: 4,
        retention: { retainedElements: 100, retainedSeconds: 0 }, cacheBytes: 1 << 20, waitReplicas: 0, appendTimeoutMs: 2_000,
        readBlockMs: 100, idempotencyTtlMs: 60_000, retentionIntervalMs: 60_000, logger: silent,
      });
      try {
        for (let seq = 1; seq <= 3; seq++) await log.append(next(log));
        const epoch = log.epoch;
        await own.kill();
        await expect(log.append(next(log))).rejects.toBeInstanceOf(LogAppendError);
        expect(log.appendFailure?.code).toBe('REDIS_UNAVAILABLE');
        expect(log.latest()?.seq).toBe(3);
        expect((await Promise.all([1, 2, 3].map((seq) => log.get(seq)))).map((element) => element?.seq)).toEqual([1, 2, 3]);
        await own.restart();
        // No event tells that a connection is back: the state is read as /health reads it.
        await vi.waitUntil(() => log.appendFailure === undefined, { timeout: 10_000, interval: 20 });
        expect(log.epoch).toBe(epoch);
        await log.append(next(log));
        expect((await log.read(1, 10)).map((element) => element.seq)).toEqual([1, 2, 3, 4]);
        // Restarted empty: a new epoch, announced, never a silent continuation of the numbers.
        const epochs: string[] = [];
        const changed = new Promise<void>((resolve) =>
          log.onEpochChanged((epochChanged) => {
            epochs.push(epochChanged);
            resolve();
          }),
        );
        await own.wipe();
        await own.restart();
        await changed;
        expect(epochs[0]).not.toBe(epoch);
        expect(log.epoch).toBe(epochs[0]);
        expect(log.latestSeq).toBe(0);
        await log.append(next(log));
        expect(log.latest()?.graph).toContain(`/${epochs[0]}-1`);
      } finally {
        await log.close();
        await connection.close().catch(() => connection.destroy());
      }
    } finally {
      await own.close();
    }
  });
});

describe('a server the shared log cannot use stops the start with what to change', () => {
  it('an unreachable server', async () => {
    const port = await freePort();
    await expect(connectRedis(`redis://127.0.0.1:${port}`, silent)).rejects.toThrow(
      new LogOpenError(`cannot reach the shared log's server at redis://127.0.0.1:${port} (ECONNREFUSED): start Redis or Valkey 7.2 or later there, or set --redis-url`),
    );
  });

  it('a wrong password, without printing it', async () => {
    const guarded = await PrivateRedis.start({ password: 'right-secret' });
    try {
      const error = await connectRedis(`redis://:wrong-secret@127.0.0.1:${guarded.port}`, silent).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(LogOpenError);
      expect((error as Error).message).toMatch(/refused the credentials .*: give its user and password in --redis-url/);
      expect((error as Error).message).not.toContain('wrong-secret');
      const connection = await connectRedis(guarded.url, silent);
      await connection.close();
    } finally {
      await guarded.close();
    }
  });

  it('Redis 7.0, which has no WAITAOF', async () => {
    const old = await PrivateRedis.start({ binary: REDIS_7_0_SERVER });
    try {
      await expect(connectRedis(old.url, silent)).rejects.toThrow(/is Redis 7\.0\.\d+; the publisher needs Redis or Valkey 7\.2 or later \(WAITAOF/);
    } finally {
      await old.close();
    }
  });
});
