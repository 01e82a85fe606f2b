import { fileURLToPath } from 'node:url';
import { createClient } from '@redis/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LeasedSource, leaseIfGenerated, runsOnOneInstance } from '../../src/log/redis/leased-source.js';
import { streamKeys } from '../../src/log/redis/redis-keys.js';
import { type LeaseCommands, SourceLease } from '../../src/log/redis/source-lease.js';
import { MemoryEventLog } from '../../src/log/memory-event-log.js';
import { loadBundledContext } from '../../src/model/bundled-context.js';
import { extractObservations } from '../../src/model/extract-observations.js';
import type { Observation } from '../../src/model/observation.js';
import { parseN3 } from '../../src/model/rdf-input.js';
import { ElementWriter } from '../../src/publish/element-writer.js';
import { JsonLdWriter } from '../../src/render/jsonld-writer.js';
import { ManualSource } from '../../src/source/manual-source.js';
import { ParkingSimulator } from '../../src/source/parking-simulator.js';
import { ReplaySource } from '../../src/source/replay-source.js';
import { manualClock } from '../../src/testing/manual-clock.js';
import { countedLeaseCommands } from '../support/counted-lease-commands.js';
import { noMetrics } from '../support/no-metrics.js';
import { PrivateRedis } from '../support/private-redis.js';
import { RecordingLogger } from '../support/source-recorder.js';

// packages/publisher/test/integration/ → repository root
const traffic = fileURLToPath(new URL('../../../../ontologies/examples/traffic-recording.ttl', import.meta.url));
const BASE_URL = 'http://127.0.0.1:8080';
const STREAM_ID = 'traffic';
/** Long enough that Redis never lets the lease lapse during the test: the leases run on manual clocks. */
const LEASE_MS = 60_000;

let redis: PrivateRedis;
const cleanups: Array<() => Promise<void> | void> = [];
beforeAll(async () => {
  redis = await PrivateRedis.start();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await redis.close();
});

async function openClient() {
  const client = createClient({ url: redis.url });
  client.on('error', () => undefined);
  await client.connect();
  cleanups.push(() => (client.isOpen ? client.destroy() : undefined));
  return client;
}

const replay = (clock = manualClock()) =>
  new ReplaySource({ file: traffic, speed: 1, loop: false, maxFileBytes: 1_000_000, logger: new RecordingLogger(), clock: clock.clock });

/** What identifies an element's observations whichever way they were read: sensor, result, phenomenon time. */
const identity = (observations: readonly Observation[]) =>
  observations.map((o) => `${o.sensor} ${String(o.simpleResult)} ${o.phenomenonTime?.toISOString()}`).sort();

/** The observations of the log's element `seq`, read back from its N-Triples. */
async function loggedObservations(log: MemoryEventLog, seq: number): Promise<Observation[]> {
  const element = await log.get(seq);
  return extractObservations(parseN3(element!.documents.ntriples.toString('utf8'), 'ntriples')).observations;
}

/** Resolves once the log holds `seq`. */
const logReached = (log: MemoryEventLog, seq: number) =>
  new Promise<void>((resolve) => {
    if (log.latestSeq >= seq) resolve();
    else log.onAppended((latest) => latest >= seq && resolve());
  });

/**
 * One publisher instance of the stream, as far as its source goes: a replay under the lease,
 * appending through its own writer to the log every instance shares (here one log in memory).
 */
async function instance(log: MemoryEventLog, jsonLd: JsonLdWriter, key: string) {
  const leaseClock = manualClock();
  const replayClock = manualClock();
  const client = await openClient();
  const redisCommands = countedLeaseCommands(client);
  const lease = new SourceLease({ redis: redisCommands.commands, key, streamId: STREAM_ID, leaseMs: LEASE_MS, logger: new RecordingLogger(), clock: leaseClock.clock });
  const writer = new ElementWriter({ baseUrl: BASE_URL, streamId: STREAM_ID, log, jsonLd, metrics: noMetrics });
  const source = new LeasedSource({ source: replay(replayClock), lease, latestElement: async () => log.latest(), streamId: STREAM_ID, logger: new RecordingLogger() });
  cleanups.push(() => source.stop());
  const published: Array<Promise<unknown>> = [];
  const start = () => source.start((observations, generatedAt) => published.push(writer.publish(observations, generatedAt)));
  return { client, redis: redisCommands, lease, leaseClock, replayClock, source, start, published };
}

describe('LeasedSource', () => {
  it('runs the replay on the lease holder only, and the instance that takes over continues after the last element in the log', async () => {
    // The recording as one uninterrupted run plays it.
    const recorded: Array<readonly Observation[]> = [];
    const wholeClock = manualClock();
    const uninterrupted = new ReplaySource({ file: traffic, speed: 1, loop: false, maxFileBytes: 1_000_000, logger: new RecordingLogger(), clock: wholeClock.clock });
    uninterrupted.start((observations) => recorded.push(observations));
    wholeClock.advanceBy(1_000_000);
    expect(recorded.length).toBeGreaterThan(4);

    const log = new MemoryEventLog(100, { retainedElements: 1_000, retainedSeconds: 0 });
    const jsonLd = new JsonLdWriter(loadBundledContext().document, `${BASE_URL}/contexts/sosa-stream.jsonld`);
    const key = streamKeys('leased-source-test', STREAM_ID).lease;
    const probe = await openClient();
    const a = await instance(log, jsonLd, key);
    const b = await instance(log, jsonLd, key);

    a.start();
    await logReached(log, 1);
    expect(a.source.health()).toMatchObject({ state: 'ok', leaseHolder: true });
    b.start();
    await b.redis.until(1);
    expect(b.lease.token).toBeUndefined();
    expect(b.source.health()).toEqual({ state: 'ok', recordsRejected: 0, leaseHolder: false });

    // The holder's replay goes on: the recording's 12 s and 5 s gaps.
    a.replayClock.advanceBy(17_000);
    await logReached(log, 3);
    // The standby's replay never started: its time passing sends nothing.
    b.replayClock.advanceBy(1_000_000);

    // The holder is cut off: its renewals fail, and on its own clock it stops the replay.
    a.client.destroy();
    const failedRenewal = a.redis.until(a.redis.answered + 1);
    a.leaseClock.advanceBy(a.lease.retryMs);
    await failedRenewal;
    a.leaseClock.advanceBy(LEASE_MS);
    expect(a.lease.token).toBeUndefined();
    expect(a.source.health()).toMatchObject({ state: 'degraded', leaseHolder: false });
    a.replayClock.advanceBy(1_000_000);
    await Promise.all(a.published);
    expect(log.latestSeq).toBe(3);

    // Redis lets its key lapse (deleted here: the lease's time runs on Redis's clock), and the
    // standby acquires it at its next attempt.
    await probe.del(key);
    const bAcquired = new Promise<void>((resolve) => b.lease.onAcquired(() => resolve()));
    b.leaseClock.advanceBy(b.lease.retryMs);
    await bAcquired;
    await logReached(log, 4);
    expect(b.source.health()).toMatchObject({ state: 'ok', leaseHolder: true });
    const logged = await Promise.all([1, 2, 3, 4].map((seq) => loggedObservations(log, seq)));
    expect(logged.map(identity)).toEqual(recorded.slice(0, 4).map(identity));

    // It plays the rest on the recording's timeline, and the recording played once ends there.
    b.replayClock.advanceBy(1_000_000);
    await logReached(log, recorded.length);
    await Promise.all(b.published);
    expect(log.latestSeq).toBe(recorded.length);
    expect(b.source.health()).toMatchObject({ state: 'stopped', leaseHolder: true });
  });

  it('drops what the source still produces once the lease is lost, and releases the lease on stop', async () => {
    const clock = manualClock();
    const key = streamKeys('leased-source-test', 'parking').lease;
    const probe = await openClient();
    const lease = new SourceLease({ redis: (await openClient()) as LeaseCommands, key, streamId: 'parking', leaseMs: LEASE_MS, logger: new RecordingLogger(), clock: clock.clock });
    const simulator = new ParkingSimulator({ streamIri: `${BASE_URL}/streams/parking`, facilities: 2, intervalMs: 1_000, seed: 7, clock: clock.clock });
    const source = new LeasedSource({ source: simulator, lease, latestElement: async () => undefined, streamId: 'parking', logger: new RecordingLogger() });
    cleanups.push(() => source.stop());
    let elements = 0;
    const first = new Promise<void>((resolve) =>
      source.start(() => {
        elements += 1;
        resolve();
      }),
    );
    await first;
    await probe.set(key, 'another-instance');
    const lost = new Promise<void>((resolve) => lease.onLost(() => resolve()));
    // The renewal finds another token; meanwhile the simulator's ticks are due.
    clock.advanceBy(lease.retryMs);
    await lost;
    const before = elements;
    clock.advanceBy(10_000);
    expect(elements).toBe(before);
    expect(source.health()).toMatchObject({ state: 'ok', leaseHolder: false });

    await probe.del(key);
    const acquired = new Promise<void>((resolve) => lease.onAcquired(() => resolve()));
    clock.advanceBy(lease.retryMs);
    await acquired;
    await source.stop();
    expect(await probe.exists(key)).toBe(0);
    expect(source.health()).toMatchObject({ state: 'stopped', leaseHolder: false });
  });

  it('leases the generated sources only: ingest and manual sources run on every instance', () => {
    expect(runsOnOneInstance(replay())).toBe(true);
    expect(runsOnOneInstance(new ParkingSimulator({ streamIri: `${BASE_URL}/streams/p`, facilities: 1, intervalMs: 1_000, seed: 1 }))).toBe(true);
    expect(runsOnOneInstance(new ManualSource(null, 'ingest'))).toBe(false);
    expect(runsOnOneInstance(new ManualSource(null))).toBe(false);
  });

  it('wraps a generated source in the lease of its stream, and leaves an ingest source as it is', async () => {
    const settings = { redis: await openClient(), keyPrefix: 'wiring-test', leaseMs: LEASE_MS, streamId: STREAM_ID, latestElement: async () => undefined, logger: new RecordingLogger() };
    const ingest = new ManualSource(null, 'ingest');
    expect(leaseIfGenerated(ingest, settings)).toBe(ingest);
    const leased = leaseIfGenerated(replay(), settings);
    expect(leased).toBeInstanceOf(LeasedSource);
    cleanups.push(() => leased.stop());
    const acquired = new Promise<string>((resolve) => (leased as LeasedSource).lease.onAcquired(resolve));
    leased.start(() => undefined);
    expect(await (await openClient()).get(streamKeys('wiring-test', STREAM_ID).lease)).toBe(await acquired);
    expect(leased.health()).toMatchObject({ leaseHolder: true });
  });
});
