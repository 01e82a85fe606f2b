import { createClient } from '@redis/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { streamKeys } from '../../src/log/redis/redis-keys.js';
import { type LeaseLossReason, SourceLease, type SourceLeaseOptions } from '../../src/log/redis/source-lease.js';
import { manualClock } from '../../src/testing/manual-clock.js';
import { PrivateRedis } from '../support/private-redis.js';
import { countedLeaseCommands } from '../support/counted-lease-commands.js';
import { RedisRelay } from '../support/redis-relay.js';
import { RecordingLogger } from '../support/source-recorder.js';


/** Leases long enough that Redis never lets one lapse during a test driven by manual clocks. */
const LONG_LEASE_MS = 60_000;
/** Leases of the tests that need Redis's own clock to let one lapse. */
const SHORT_LEASE_MS = 300;

let redis: PrivateRedis;
const cleanups: Array<() => Promise<void> | void> = [];
let keys = 0;
const nextKey = () => streamKeys('lease-test', `stream-${++keys}`).lease;

beforeAll(async () => {
  redis = await PrivateRedis.start();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await redis.close();
});

async function openClient(url = redis.url) {
  const client = createClient({ url });
  // Connection errors are what some tests cause; the lease reports them through its commands.
  client.on('error', () => undefined);
  await client.connect();
  cleanups.push(() => (client.isOpen ? client.destroy() : undefined));
  return client;
}

function lease(options: Omit<SourceLeaseOptions, 'streamId' | 'logger'> & { logger?: RecordingLogger }): SourceLease {
  const created = new SourceLease({ streamId: 'parking', logger: new RecordingLogger(), ...options });
  cleanups.push(() => created.stop());
  return created;
}

const acquired = (of: SourceLease) => new Promise<string>((resolve) => of.onAcquired(resolve));
const lost = (of: SourceLease) => new Promise<LeaseLossReason>((resolve) => of.onLost(resolve));

describe('SourceLease', () => {
  it('has one holder among two instances, whose token is in the key, through renewals and attempts', async () => {
    const key = nextKey();
    const probe = await openClient();
    const [clockA, clockB] = [manualClock(), manualClock()];
    const [redisA, redisB] = [countedLeaseCommands(await openClient()), countedLeaseCommands(await openClient())];
    const a = lease({ redis: redisA.commands, key, leaseMs: LONG_LEASE_MS, clock: clockA.clock });
    const b = lease({ redis: redisB.commands, key, leaseMs: LONG_LEASE_MS, clock: clockB.clock });
    a.start();
    b.start();
    await Promise.all([redisA.until(1), redisB.until(1)]);
    const holder = a.token !== undefined ? a : b;
    const other = holder === a ? b : a;
    const token = holder.token;
    expect(token).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(other.token).toBeUndefined();
    for (let round = 2; round <= 4; round++) {
      clockA.advanceBy(a.retryMs);
      clockB.advanceBy(b.retryMs);
      await Promise.all([redisA.until(round), redisB.until(round)]);
      expect([holder.token, other.token]).toEqual([token, undefined]);
      expect(await probe.get(key)).toBe(token);
    }
    expect(await probe.pTTL(key)).toBeGreaterThan(LONG_LEASE_MS - 10_000);
  });

  it('is taken over by the other instance within the lease and one retry interval after its holder dies without releasing it', async () => {
    const key = nextKey();
    const holderClient = await openClient();
    const a = lease({ redis: holderClient, key, leaseMs: SHORT_LEASE_MS });
    const aAcquired = acquired(a);
    a.start();
    await aAcquired;
    const redisB = countedLeaseCommands(await openClient());
    const b = lease({ redis: redisB.commands, key, leaseMs: SHORT_LEASE_MS });
    const bAcquired = acquired(b);
    let aTokenWhenBAcquired: string | undefined = 'not acquired yet';
    b.onAcquired(() => (aTokenWhenBAcquired = a.token));
    b.start();
    await redisB.until(1);
    expect(b.token).toBeUndefined();

    // The holder's process dies: its connection goes, nothing is released, nothing renewed.
    const attemptsBefore = redisB.answered;
    holderClient.destroy();
    const token = await bAcquired;
    // B tries every third of the lease: the key lapsed at most one lease after the death, and B
    // got it at its first attempt after that.
    expect(redisB.answered - attemptsBefore).toBeLessThanOrEqual(SHORT_LEASE_MS / b.retryMs + 1);
    expect(aTokenWhenBAcquired).toBeUndefined();
    expect(await (await openClient()).get(key)).toBe(token);
  });

  it('counts itself lost before the lease expires when Redis cannot be reached (the server is killed)', async () => {
    const own = await PrivateRedis.start();
    cleanups.push(() => own.close());
    const clock = manualClock();
    const logger = new RecordingLogger();
    const leaseMs = 3_000;
    const client = await openClient(own.url);
    const a = lease({ redis: client, key: nextKey(), leaseMs, clock: clock.clock, logger });
    const aAcquired = acquired(a);
    const acquiredAt = clock.now();
    a.start();
    await aAcquired;
    expect(logger.calls).toContainEqual({ level: 'info', fields: { stream: 'parking', leaseMs }, message: 'source lease acquired: this instance runs the source' });

    await own.kill();
    const aLost = lost(a);
    clock.advanceBy(a.retryMs);
    clock.advanceBy(a.retryMs);
    // A tenth of the lease before Redis could hand it to another, the source stops.
    clock.advanceTo(acquiredAt + leaseMs - leaseMs / 10 - 1);
    expect(a.token).toBeDefined();
    clock.advanceBy(1);
    expect(await aLost).toBe('unrenewed');
    expect(a.token).toBeUndefined();
    expect(clock.now() - acquiredAt).toBeLessThan(leaseMs);
    expect(logger.calls.some((call) => call.level === 'warn' && (call.fields as { stream?: string }).stream === 'parking' && call.message.startsWith('source lease lost'))).toBe(true);
    // The renewal still queued in the client fails at once, rather than at the client's own timeout.
    client.destroy();
  });

  it('never lets a token outlive its lease: a holder cut off from Redis has dropped it before another acquires it', async () => {
    const key = nextKey();
    const relay = await RedisRelay.start(redis.port);
    cleanups.push(() => relay.close());
    const a = lease({ redis: await openClient(relay.url), key, leaseMs: SHORT_LEASE_MS });
    const aAcquired = acquired(a);
    a.start();
    const aToken = await aAcquired;
    const aLost = lost(a);

    const redisB = countedLeaseCommands(await openClient());
    const b = lease({ redis: redisB.commands, key, leaseMs: SHORT_LEASE_MS });
    const bAcquired = acquired(b);
    let aTokenWhenBAcquired: string | undefined = 'not acquired yet';
    b.onAcquired(() => (aTokenWhenBAcquired = a.token));
    b.start();
    await redisB.until(1);

    // A partition: A's renewals go unanswered while Redis, and the lease's time, go on.
    relay.freeze();
    const bToken = await bAcquired;
    expect(await aLost).toBe('unrenewed');
    expect(aTokenWhenBAcquired).toBeUndefined();
    expect(bToken).not.toBe(aToken);
  });

  it('gives back a lease that a renewal answered too late extended, so that no instance waits a whole lease for it', async () => {
    const key = nextKey();
    const probe = await openClient();
    const relay = await RedisRelay.start(redis.port);
    cleanups.push(() => relay.close());
    const clock = manualClock();
    const redisA = countedLeaseCommands(await openClient(relay.url));
    const a = lease({ redis: redisA.commands, key, leaseMs: LONG_LEASE_MS, clock: clock.clock });
    const aAcquired = acquired(a);
    a.start();
    const token = await aAcquired;
    await redisA.until(1);

    relay.freeze();
    const aLost = lost(a);
    clock.advanceBy(a.retryMs); // the renewal is sent, and held
    clock.advanceBy(LONG_LEASE_MS);
    expect(await aLost).toBe('unrenewed');
    expect(await probe.get(key)).toBe(token);

    // The partition ends: the renewal reaches Redis and extends the lease, which A no longer runs.
    relay.thaw();
    await redisA.until(3); // acquisition, the late renewal, the release
    expect(await probe.exists(key)).toBe(0);
  });

  it('releases on stop: the other instance acquires at its next attempt, long before the lease would lapse', async () => {
    const key = nextKey();
    const probe = await openClient();
    const [clockA, clockB] = [manualClock(), manualClock()];
    const a = lease({ redis: await openClient(), key, leaseMs: LONG_LEASE_MS, clock: clockA.clock });
    const aAcquired = acquired(a);
    a.start();
    await aAcquired;
    const redisB = countedLeaseCommands(await openClient());
    const b = lease({ redis: redisB.commands, key, leaseMs: LONG_LEASE_MS, clock: clockB.clock });
    b.start();
    await redisB.until(1);
    expect(b.token).toBeUndefined();

    await a.stop();
    expect(a.token).toBeUndefined();
    expect(await probe.exists(key)).toBe(0);
    const bAcquired = acquired(b);
    clockB.advanceBy(b.retryMs);
    expect(await bAcquired).toBe(await probe.get(key));
  });

  it("loses the lease when a renewal finds another instance's token, and never deletes that token", async () => {
    const key = nextKey();
    const probe = await openClient();
    const clock = manualClock();
    const a = lease({ redis: await openClient(), key, leaseMs: LONG_LEASE_MS, clock: clock.clock });
    const aAcquired = acquired(a);
    a.start();
    await aAcquired;
    await probe.set(key, 'another-instance');
    const aLost = lost(a);
    clock.advanceBy(a.retryMs);
    expect(await aLost).toBe('taken');
    expect(a.token).toBeUndefined();
    await a.stop();
    expect(await probe.get(key)).toBe('another-instance');
  });
});
