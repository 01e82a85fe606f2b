import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { formatNames, gapReasons } from '@rdf-stream/protocol';
import type { EventLog } from '../../../src/log/event-log.js';
import { FileEventLog } from '../../../src/log/file-event-log.js';
import { follow, isGap, type LogCursor, type LogStep, resumeFrom } from '../../../src/log/follow-log.js';
import { MemoryEventLog } from '../../../src/log/memory-event-log.js';
import { connectRedis } from '../../../src/log/redis/redis-connection.js';
import { RedisEventLog } from '../../../src/log/redis/redis-event-log.js';
import { streamKeys } from '../../../src/log/redis/redis-keys.js';
import { PrivateRedis } from '../../support/private-redis.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
import { loggedElement } from '../../support/logged-element.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface LogKind {
  readonly name: string;
  /** A log of `pageElements` per page that keeps at least `retainedElements`; retention runs on `applyRetention` only. */
  open(pageElements: number, retainedElements: number): Promise<EventLog>;
}

const kinds: LogKind[] = [
  {
    name: 'MemoryEventLog',
    open: (pageElements, retainedElements) => Promise.resolve(new MemoryEventLog(pageElements, { retainedElements, retainedSeconds: 0 })),
  },
  {
    name: 'FileEventLog',
    async open(pageElements, retainedElements) {
      const directory = mkdtempSync(join(tmpdir(), 'follow-log-'));
      const log = await FileEventLog.open({
        streamId: 'parking',
        directory,
        formats: formatNames,
        pageElements,
        retention: { retainedElements, retainedSeconds: 0 },
        // Small enough that older pages are read back from disk.
        cacheBytes: 2_000,
        syncIntervalMs: 0,
        maxPendingBytes: 1024 * 1024,
        retentionIntervalMs: 3_600_000,
        logger: silent,
      });
      cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
      cleanups.push(() => log.close());
      return log;
    },
  },
  {
    // The shared log (a real Valkey): its elements arrive through its own follower (XREAD), and
    // its append script applies retention by count at once.
    name: 'RedisEventLog',
    async open(pageElements, retainedElements) {
      redis ??= await PrivateRedis.start();
      const client = await connectRedis(redis.url, silent);
      const log = await RedisEventLog.open({
        streamId: 'parking',
        baseUrl: 'http://127.0.0.1:8080',
        keys: streamKeys(`follow${++redisLogs}`, 'parking'),
        client,
        formats: formatNames,
        pageElements,
        retention: { retainedElements, retainedSeconds: 0 },
        cacheBytes: 2_000,
        waitReplicas: 0,
        appendTimeoutMs: 5_000,
        readBlockMs: 200,
        idempotencyTtlMs: 60_000,
        retentionIntervalMs: 3_600_000,
        logger: silent,
      });
      cleanups.push(() => client.close());
      cleanups.push(() => log.close());
      return log;
    },
  },
];

let redis: PrivateRedis | undefined;
let redisLogs = 0;
afterAll(async () => {
  await redis?.close();
});

/** Appends `from`…`to` in one event-loop turn (a file log commits them together). */
const appendRange = (log: EventLog, from: number, to: number) =>
  Promise.all(Array.from({ length: to - from + 1 }, (_, index) => log.append(loggedElement(from + index, undefined, log.epoch))));

/** Every step until the cursor has handed out every durable element. */
async function drain(cursor: LogCursor, limit: number): Promise<LogStep[]> {
  const steps: LogStep[] = [];
  while (!cursor.caughtUp) steps.push(await cursor.next(limit));
  return steps;
}

/** The steps as the reader sees them: `seq` per element, `gap from–to (reason)` per gap. */
const described = (steps: readonly LogStep[]): Array<string | number> =>
  steps.flatMap((step): Array<string | number> => (isGap(step) ? [`gap ${step.from}–${step.to} (${step.reason})`] : step.map((element) => element.seq)));

/** Each sequence number an element or a gap accounted for, in the order the reader learnt of it. */
const accounted = (steps: readonly LogStep[]) =>
  steps.flatMap((step) => (isGap(step) ? Array.from({ length: step.to - step.from + 1 }, (_, index) => step.from + index) : step.map((element) => element.seq)));

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);

describe.each(kinds)('follow on a $name', (kind) => {
  it('hands out every element after the position, dense and in order, across read batches and pages', async () => {
    const log = await kind.open(4, 1_000);
    await appendRange(log, 1, 11);
    const cursor = follow(log, 2);
    const steps = await drain(cursor, 3);
    expect(steps.map((step) => (isGap(step) ? 'gap' : step.length))).toEqual([3, 3, 3]);
    expect(described(steps)).toEqual(range(3, 11));
    expect(cursor.position).toBe(11);
    expect(await cursor.next(3)).toEqual([]);
  });

  it('hands out the elements appended while a read was in flight, each once', async () => {
    const log = await kind.open(4, 1_000);
    await appendRange(log, 1, 5);
    const cursor = follow(log, 0);
    const reading = cursor.next(100);
    const appending = appendRange(log, 6, 9);
    const first = await reading;
    await appending;
    const rest = await drain(cursor, 100);
    expect(described([first, ...rest])).toEqual(range(1, 9));
  });

  it('gives a cursor that retention overtook a gap "expired", then goes on from the oldest retained element', async () => {
    const log = await kind.open(4, 4);
    await appendRange(log, 1, 6);
    const cursor = follow(log, 1);
    expect(described([await cursor.next(1)])).toEqual([2]);
    await appendRange(log, 7, 13);
    await log.applyRetention();
    expect(log.oldestSeq).toBe(9);
    const steps = await drain(cursor, 2);
    expect(described(steps)).toEqual(['gap 3–8 (expired)', 9, 10, 11, 12, 13]);
  });

  it('accounts for every sequence number exactly once when retention runs during a read', async () => {
    const log = await kind.open(4, 4);
    await appendRange(log, 1, 20);
    const cursor = follow(log, 0);
    const reading = cursor.next(6);
    await log.applyRetention();
    const steps = [await reading, ...(await drain(cursor, 6))];
    expect(accounted(steps)).toEqual(range(1, 20));
    for (const step of steps) if (isGap(step)) expect(gapReasons).toContain(step.reason);
  });

  it('applies the resume rules to a position a reader sent: ahead of the log, another epoch, expired, retained', async () => {
    const log = await kind.open(4, 4);
    await appendRange(log, 1, 10);
    await log.applyRetention();
    expect(log.oldestSeq).toBe(5);
    const first = async (position: { epoch: string | undefined; seq: number }) => described([await follow(log, position).next(100)]);
    expect(await first({ epoch: log.epoch, seq: 11 })).toEqual(['gap 1–4 (unknown)']);
    expect(await first({ epoch: 'otherepoch', seq: 7 })).toEqual(['gap 1–4 (epoch)']);
    expect(await first({ epoch: undefined, seq: 7 })).toEqual(['gap 1–4 (epoch)']);
    expect(await first({ epoch: log.epoch, seq: 2 })).toEqual(['gap 3–4 (expired)']);
    expect(await first({ epoch: log.epoch, seq: 4 })).toEqual([5, 6, 7, 8, 9, 10]);
    // After the gap, the reader goes on from the oldest retained element.
    const cursor = follow(log, { epoch: 'otherepoch', seq: 3 });
    expect(cursor.caughtUp).toBe(false);
    expect(described(await drain(cursor, 100))).toEqual(['gap 1–4 (epoch)', 5, 6, 7, 8, 9, 10]);
  });

  it('is caught up, synchronously, once the newest durable element is handed out, and hands the newest out without a read', async () => {
    const log = await kind.open(4, 1_000);
    await appendRange(log, 1, 3);
    const cursor = follow(log, 2);
    expect(cursor.caughtUp).toBe(false);
    expect(cursor.nextLatest()?.seq).toBe(3);
    expect(cursor.caughtUp).toBe(true);
    expect(cursor.nextLatest()).toBeUndefined();
    await appendRange(log, 4, 5);
    // Two behind: the newest is not the next one.
    expect(cursor.nextLatest()).toBeUndefined();
    expect(described(await drain(cursor, 10))).toEqual([4, 5]);
  });
});

describe('resumeFrom', () => {
  const bounds = { epoch: 'e1', oldestSeq: 5, latestSeq: 10 };

  it('chooses the gap reasons in the order of the protocol: epoch, then unknown, then expired', () => {
    expect(resumeFrom({ epoch: 'e2', seq: 20 }, bounds)).toMatchObject({ reason: 'epoch', to: 4 });
    expect(resumeFrom({ epoch: 'e1', seq: 11 }, bounds)).toMatchObject({ reason: 'unknown', to: 4 });
    expect(resumeFrom({ epoch: 'e1', seq: 3 }, bounds)).toEqual({ kind: 'gap', reason: 'expired', from: 4, to: 4 });
    expect(resumeFrom({ epoch: 'e1', seq: 4 }, bounds)).toEqual({ afterSeq: 4 });
    expect(resumeFrom({ epoch: 'e1', seq: 10 }, bounds)).toEqual({ afterSeq: 10 });
  });

  it('resumes an empty log after its newest number', () => {
    expect(resumeFrom({ epoch: 'e1', seq: 0 }, { epoch: 'e1', oldestSeq: undefined, latestSeq: 0 })).toEqual({ afterSeq: 0 });
    expect(resumeFrom({ epoch: 'e1', seq: 3 }, { epoch: 'e1', oldestSeq: undefined, latestSeq: 0 })).toEqual({ kind: 'gap', reason: 'unknown', from: 1, to: 0 });
  });
});

describe('follow on a replica the writer could not relay every element to', () => {
  it('gives the hole as a gap "expired", not the next element in its place', async () => {
    const replica = new MemoryEventLog(4, { retainedElements: 100, retainedSeconds: 0 }, { epoch: 'writer', replica: true });
    await replica.append(loggedElement(1, undefined, 'writer'));
    const cursor = follow(replica, 0);
    expect(described(await drain(cursor, 10))).toEqual([1]);
    await replica.append(loggedElement(5, undefined, 'writer'));
    expect(described(await drain(cursor, 10))).toEqual(['gap 2–4 (expired)', 5]);
  });
});
