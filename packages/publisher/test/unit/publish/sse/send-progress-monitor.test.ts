import { describe, expect, it } from 'vitest';
import { connectionKey, type KernelSendQueues } from '../../../../src/publish/sse/kernel-send-queues.js';
import { type MonitoredSocket, type ProgressVerdict, SendProgressMonitor, type WatchOptions } from '../../../../src/publish/sse/send-progress-monitor.js';
import type { SocketSendQueue } from '../../../../src/publish/sse/socket-send-queue.js';
import { manualClock } from '../../../../src/testing/manual-clock.js';

const limits = { maxQueueBytes: 512 * 1024, stallTimeoutMs: 10_000 };
const CHECK_MS = 1_000;

/** A socket as the monitor reads it, and the bytes the kernel holds for it (set by the test). */
class FakeConnection implements MonitoredSocket {
  static #nextPort = 40_000;
  readonly localAddress = '127.0.0.1';
  readonly localPort = 8080;
  readonly remoteAddress = '127.0.0.1';
  readonly remotePort = FakeConnection.#nextPort++;
  writableLength = 0;
  kernelQueued = 0;
  /** How often the monitor read `bytesWritten`. */
  counterReads = 0;
  #bytesWritten = 0;

  get bytesWritten(): number {
    this.counterReads++;
    return this.#bytesWritten;
  }

  /** Hands `bytes` to the kernel, which holds them until the client acknowledges them. */
  send(bytes: number): void {
    this.#bytesWritten += bytes;
    this.kernelQueued += bytes;
  }

  acknowledge(bytes: number): void {
    this.kernelQueued -= bytes;
  }
}

/** The kernel's table: every connection's queue; `duringSnapshot` runs while it is read. */
class FakeQueues implements KernelSendQueues {
  readonly connections: FakeConnection[] = [];
  available = true;
  snapshots = 0;
  duringSnapshot: () => void = () => undefined;

  async snapshot(found: (key: string, queuedBytes: number) => void): Promise<boolean> {
    this.snapshots++;
    if (!this.available) return false;
    await Promise.resolve();
    for (const connection of this.connections) found(connectionKey(connection) as string, connection.kernelQueued);
    this.duringSnapshot();
    return true;
  }
}

/** `ioctl(SIOCOUTQ)` per socket: reads a connection's queue at once, except those in `unreadable`. */
class FakeSocketQueue implements SocketSendQueue {
  readonly unreadable = new Set<MonitoredSocket>();
  reads = 0;

  queued(socket: MonitoredSocket): number | undefined {
    if (this.unreadable.has(socket)) return undefined;
    this.reads++;
    return (socket as FakeConnection).kernelQueued;
  }
}

function setup(perSocket?: FakeSocketQueue) {
  const time = manualClock(0);
  const queues = new FakeQueues();
  let yields = 0;
  const monitor = new SendProgressMonitor(
    CHECK_MS,
    queues,
    time.clock,
    async () => {
      yields++;
    },
    perSocket,
  );
  const verdicts = new Map<FakeConnection, ProgressVerdict[]>();
  const watch = (connection = new FakeConnection(), connectionLimits = limits, options?: WatchOptions) => {
    queues.connections.push(connection);
    verdicts.set(connection, []);
    const progress = monitor.watch(connection, connectionLimits, (verdict) => verdicts.get(connection)?.push(verdict), options);
    return { connection, unwatch: progress.stop, wrote: progress.wrote, verdicts: verdicts.get(connection) as ProgressVerdict[] };
  };
  /** Advances to `ms` one check at a time, awaiting each (each check is asynchronous). */
  const runUntil = async (ms: number) => {
    while (time.now() + CHECK_MS <= ms) {
      time.advanceBy(CHECK_MS);
      await waitForCheck();
    }
  };
  // A check is asynchronous (its snapshot, its slices): a macrotask runs it to its end.
  const waitForCheck = () => new Promise((resolve) => setImmediate(resolve));
  return { time, queues, monitor, watch, runUntil, yields: () => yields };
}

describe('SendProgressMonitor', () => {
  it('reports a client that acknowledges nothing for stallTimeoutMs while bytes are outstanding, not a check earlier', async () => {
    const { watch, runUntil } = setup();
    const { connection, verdicts } = watch();
    connection.send(128 * 1024); // its receive buffer is full: nothing more is acknowledged
    await runUntil(CHECK_MS); // the first check is its last progress
    await runUntil(CHECK_MS + limits.stallTimeoutMs - CHECK_MS);
    expect(verdicts).toEqual([]);
    await runUntil(CHECK_MS + limits.stallTimeoutMs);
    expect(verdicts).toEqual(['stall']);
  });

  it('counts what the kernel keeps accepting from a stalled client as outstanding, not as progress', async () => {
    // The bug this guards against: a kernel growing the socket's buffer accepts every write of a
    // slow stream for a quarter of an hour, so "write() accepted" says nothing about the reader.
    const { watch, runUntil } = setup();
    const { connection, verdicts } = watch();
    for (let second = 1; second <= 11; second++) {
      connection.send(5_500);
      await runUntil(second * CHECK_MS);
    }
    expect(verdicts).toEqual(['stall']);
  });

  it('keeps a client that acknowledges something within each stallTimeoutMs, however slowly', async () => {
    const { watch, runUntil } = setup();
    const { connection, verdicts } = watch();
    for (let second = 1; second <= 60; second++) {
      connection.send(5_500);
      if (second % 9 === 0) connection.acknowledge(1);
      await runUntil(second * CHECK_MS);
    }
    expect(verdicts).toEqual([]);
  });

  it('keeps an idle connection (nothing outstanding) however long its client is silent', async () => {
    const { watch, runUntil } = setup();
    const { connection, verdicts } = watch();
    connection.send(1_000);
    connection.acknowledge(1_000);
    await runUntil(120_000);
    expect(verdicts).toEqual([]);
  });

  it('takes no snapshot while every connection is idle and nothing was sent since, and one as soon as something is', async () => {
    const { watch, runUntil, queues } = setup();
    const { connection, verdicts } = watch();
    connection.send(5_500);
    connection.acknowledge(5_500);
    await runUntil(CHECK_MS); // idle, as this snapshot shows
    await runUntil(20 * CHECK_MS);
    expect(queues.snapshots).toBe(1);
    connection.send(5_500); // a stalled client from now on
    await runUntil(21 * CHECK_MS);
    expect(queues.snapshots).toBe(2);
    // Its stall counts from the last check that knew it idle, not from its last snapshot.
    await runUntil(20 * CHECK_MS + limits.stallTimeoutMs - CHECK_MS);
    expect(verdicts).toEqual([]);
    await runUntil(20 * CHECK_MS + limits.stallTimeoutMs);
    expect(verdicts).toEqual(['stall']);
  });

  it.each([
    ['from a snapshot', false],
    ['socket by socket', true],
  ])('reports unacknowledged bytes (kernel + process) over maxQueueBytes at once, not at the limit (queues read %s)', async (_, bySocket) => {
    const { watch, runUntil, queues } = setup(bySocket ? new FakeSocketQueue() : undefined);
    const atLimit = watch();
    atLimit.connection.send(limits.maxQueueBytes - 100);
    atLimit.connection.writableLength = 100;
    const over = watch();
    over.connection.send(limits.maxQueueBytes - 100);
    over.connection.writableLength = 101;
    await runUntil(CHECK_MS);
    expect(over.verdicts).toEqual(['queue']);
    expect(atLimit.verdicts).toEqual([]);
    expect(queues.snapshots).toBe(bySocket ? 0 : 1);
  });

  it('does not take writes made while the table is read for the reader progressing', async () => {
    // The table is read on the thread pool: a broadcast may write meanwhile. Counting the bytes
    // sent after the snapshot against the snapshot's queue would look like acknowledgements.
    const { watch, runUntil, queues } = setup();
    const { connection, verdicts } = watch();
    connection.send(200_000);
    let checks = 0;
    queues.duringSnapshot = () => {
      // During every snapshot, a write (larger each time) the snapshot did not see.
      connection.send(1_000 * ++checks);
    };
    await runUntil(CHECK_MS + limits.stallTimeoutMs);
    expect(verdicts).toEqual(['stall']);
  });

  it('skips a connection missing from the table (closed meanwhile) and stops reporting once unwatched', async () => {
    const { watch, runUntil, queues, monitor } = setup();
    const { connection, verdicts, unwatch } = watch();
    connection.send(100_000);
    queues.connections.length = 0; // not in the table
    await runUntil(30_000);
    expect(verdicts).toEqual([]);
    queues.connections.push(connection);
    await runUntil(30_000 + CHECK_MS + limits.stallTimeoutMs);
    expect(verdicts).toEqual(['stall']);
    unwatch();
    expect(monitor.size).toBe(0);
    await runUntil(60_000);
    expect(verdicts).toEqual(['stall']);
  });

  it('stops, watching nothing, on a system without a table of kernel queues (refused writes still guard)', async () => {
    const { watch, runUntil, queues, monitor, time } = setup();
    queues.available = false;
    const { connection, verdicts } = watch();
    connection.send(1 << 20);
    await runUntil(30_000);
    expect(verdicts).toEqual([]);
    expect(monitor.supported).toBe(false);
    expect(queues.snapshots).toBe(1);
    watch();
    expect(monitor.size).toBe(0);
    expect(time.pending()).toBe(0);
  });

  it('takes no snapshot while nothing is watched', async () => {
    const { watch, runUntil, queues, time } = setup();
    const { unwatch } = watch();
    await runUntil(3 * CHECK_MS);
    unwatch();
    await runUntil(10 * CHECK_MS);
    expect(queues.snapshots).toBeLessThanOrEqual(4);
    expect(time.pending()).toBe(0);
  });

  it('reads the counters of many connections in slices, yielding between them', async () => {
    const { watch, runUntil, yields } = setup();
    const stalled = Array.from({ length: 2_500 }, () => watch());
    for (const { connection } of stalled) connection.send(1_000);
    await runUntil(CHECK_MS + limits.stallTimeoutMs);
    // Three slices before the snapshot and three after: two yields each.
    expect(yields()).toBeGreaterThanOrEqual(4);
    expect(stalled.every(({ verdicts }) => verdicts[0] === 'stall')).toBe(true);
  });

  describe('reading each socket\'s queue at once (ioctl SIOCOUTQ)', () => {
    it('judges outstanding connections without any snapshot: a stall after stallTimeoutMs, not a check earlier, a slow reader kept', async () => {
      const perSocket = new FakeSocketQueue();
      const { watch, runUntil, queues } = setup(perSocket);
      const stalled = watch();
      const slow = watch();
      stalled.connection.send(128 * 1024);
      for (let second = 1; second < 11; second++) {
        slow.connection.send(5_500);
        if (second % 9 === 0) slow.connection.acknowledge(1);
        await runUntil(second * CHECK_MS);
      }
      // The first check was the stalled one's last progress (nothing acknowledged since).
      expect(stalled.verdicts).toEqual([]);
      await runUntil(CHECK_MS + limits.stallTimeoutMs);
      expect(stalled.verdicts).toEqual(['stall']);
      expect(slow.verdicts).toEqual([]);
      expect(queues.snapshots).toBe(0);
      expect(perSocket.reads).toBeGreaterThan(0);
    });

    it('does not read a connection idle since its last check, and reads it again once something is sent', async () => {
      const perSocket = new FakeSocketQueue();
      const { watch, runUntil } = setup(perSocket);
      const { connection, verdicts } = watch();
      connection.send(5_500);
      connection.acknowledge(5_500);
      await runUntil(CHECK_MS); // read once: idle
      await runUntil(20 * CHECK_MS);
      expect(perSocket.reads).toBe(1);
      connection.send(5_500); // stalled from now on
      await runUntil(21 * CHECK_MS);
      expect(perSocket.reads).toBe(2);
      await runUntil(20 * CHECK_MS + limits.stallTimeoutMs - CHECK_MS);
      expect(verdicts).toEqual([]);
      await runUntil(20 * CHECK_MS + limits.stallTimeoutMs);
      expect(verdicts).toEqual(['stall']);
    });

    it('judges a connection it cannot read from a snapshot, and only that one', async () => {
      const perSocket = new FakeSocketQueue();
      const { watch, runUntil, queues } = setup(perSocket);
      const readable = watch();
      const unreadable = watch();
      perSocket.unreadable.add(unreadable.connection);
      readable.connection.send(100_000);
      await runUntil(CHECK_MS); // the unreadable one, new, is learnt idle from a snapshot
      expect(queues.snapshots).toBe(1);
      await runUntil(5 * CHECK_MS);
      expect(queues.snapshots).toBe(1);
      unreadable.connection.send(100_000);
      // A write during the snapshot is no progress of the connection read from it.
      queues.duringSnapshot = () => unreadable.connection.send(1_000);
      await runUntil(CHECK_MS + limits.stallTimeoutMs);
      expect(readable.verdicts).toEqual(['stall']);
      expect(unreadable.verdicts).toEqual([]);
      await runUntil(5 * CHECK_MS + limits.stallTimeoutMs);
      expect(unreadable.verdicts).toEqual(['stall']);
      // One snapshot at each check while it had something outstanding (from 6 s to 15 s).
      expect(queues.snapshots).toBe(1 + limits.stallTimeoutMs / CHECK_MS);
    });
  });

  describe('a connection whose every write is reported (writesReported)', () => {
    it('is left out of every check while idle, not even its counters read, and watched again from its next write', async () => {
      const perSocket = new FakeSocketQueue();
      const { watch, runUntil, monitor, queues } = setup(perSocket);
      const connection = new FakeConnection();
      const { wrote, verdicts } = watch(connection, limits, { writesReported: true });
      connection.send(5_500);
      wrote();
      connection.acknowledge(5_500);
      await runUntil(CHECK_MS); // read once: idle
      expect(monitor.unsettled).toBe(0);
      const [reads, counterReads] = [perSocket.reads, connection.counterReads];
      await runUntil(20 * CHECK_MS);
      expect([perSocket.reads, connection.counterReads]).toEqual([reads, counterReads]);
      expect(queues.snapshots).toBe(0);
      connection.send(5_500); // stalled from now on
      wrote();
      expect(monitor.unsettled).toBe(1);
      await runUntil(21 * CHECK_MS);
      expect(perSocket.reads).toBe(reads + 1);
      // Its wait starts at the write (20 s), not at the last check that found it idle.
      await runUntil(20 * CHECK_MS + limits.stallTimeoutMs - CHECK_MS);
      expect(verdicts).toEqual([]);
      await runUntil(20 * CHECK_MS + limits.stallTimeoutMs);
      expect(verdicts).toEqual(['stall']);
    });

    it('stays in the checks while something is outstanding, and a write reported during a check changes nothing', async () => {
      const perSocket = new FakeSocketQueue();
      const { watch, runUntil, monitor } = setup(perSocket);
      const { connection, wrote, verdicts } = watch(new FakeConnection(), limits, { writesReported: true });
      for (let second = 1; second <= 30; second++) {
        connection.send(5_500);
        wrote();
        wrote(); // told twice: still one connection to visit
        if (second % 5 === 0) connection.acknowledge(1);
        await runUntil(second * CHECK_MS);
        expect(monitor.unsettled).toBe(1);
      }
      expect(verdicts).toEqual([]);
    });

    it('is judged from a snapshot when its queue cannot be read alone, and left out once idle', async () => {
      const { watch, runUntil, monitor, queues } = setup();
      const { connection, wrote } = watch(new FakeConnection(), limits, { writesReported: true });
      connection.send(5_500);
      wrote();
      // A write during the snapshot is not idle: still visited at the next check.
      queues.duringSnapshot = () => {
        connection.send(10);
        wrote();
      };
      await runUntil(CHECK_MS);
      expect(monitor.unsettled).toBe(1);
      queues.duringSnapshot = () => undefined;
      connection.acknowledge(5_510);
      await runUntil(2 * CHECK_MS);
      expect(monitor.unsettled).toBe(0);
      await runUntil(10 * CHECK_MS);
      expect(queues.snapshots).toBe(2);
    });

    it('is one entry when its connection is watched anew (a keep-alive connection watched for earlier requests)', async () => {
      const { watch, runUntil, monitor } = setup(new FakeSocketQueue());
      const connection = new FakeConnection();
      const before = watch(connection);
      const after = watch(connection, limits, { writesReported: true });
      expect([monitor.size, monitor.unsettled]).toEqual([1, 1]);
      before.unwatch(); // the earlier watcher letting go leaves the later one
      expect([monitor.size, monitor.unsettled]).toEqual([1, 1]);
      await runUntil(CHECK_MS);
      expect(monitor.unsettled).toBe(0);
      connection.send(5_500);
      after.wrote(); // at 1 s: its wait starts
      await runUntil(CHECK_MS + limits.stallTimeoutMs);
      expect(after.verdicts).toEqual(['stall']);
      expect(before.verdicts).toEqual([]);
    });

    it('stops being watched when stopped, quiet or not, and a write after that brings nothing back', async () => {
      const { watch, runUntil, monitor } = setup(new FakeSocketQueue());
      const { connection, wrote, unwatch } = watch(new FakeConnection(), limits, { writesReported: true });
      await runUntil(CHECK_MS); // idle from the start: quiet
      expect(monitor.unsettled).toBe(0);
      unwatch();
      connection.send(5_500);
      wrote();
      expect([monitor.size, monitor.unsettled]).toEqual([0, 0]);
    });
  });
});
