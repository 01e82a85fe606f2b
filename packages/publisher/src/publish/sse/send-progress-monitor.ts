import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Clock, monotonicClock } from '../../clock-and-logger.js';
import { defaults } from '../../config/defaults.js';
import { type ConnectionEnds, connectionKey, type KernelSendQueues, ProcNetTcpSendQueues } from './kernel-send-queues.js';
import { type SendQueueReaderChoice, type SocketSendQueue, socketSendQueue } from './socket-send-queue.js';

/** The part of a `net.Socket` the monitor reads (a fake in unit tests). */
export interface MonitoredSocket extends ConnectionEnds {
  /** Bytes written, those still queued in the process included. */
  readonly bytesWritten: number;
  /** Bytes queued in the process (not yet handed to the kernel). */
  readonly writableLength: number;
}

/** When a watched connection must be cut. */
export interface ProgressLimits {
  /** Bytes its client has not acknowledged (queued in the process + held by the kernel). */
  readonly maxQueueBytes: number;
  /** Milliseconds without its client acknowledging a byte while some are outstanding. */
  readonly stallTimeoutMs: number;
}

/** Why a watched connection is over its limits. */
export type ProgressVerdict = 'queue' | 'stall';

/** A connection being watched, as its watcher sees it (`SendProgressMonitor.watch`). */
export interface ProgressWatch {
  /**
   * Says that something was just written to the connection. Only a connection watched with
   * `writesReported` needs it (and then after every write to it): while it is idle the monitor
   * does not read it at all, and this is how it learns there is something to watch again.
   */
  wrote(): void;
  /** Stops watching (on close, on eviction). */
  stop(): void;
}

/** How a connection is watched. */
export interface WatchOptions {
  /**
   * Every write to the connection is reported with `ProgressWatch.wrote` (a connection only its
   * watcher writes to: an SSE subscriber, a WebSocket, a notification receiver). An idle one is
   * then left out of every check until its next write, instead of having its counters read at
   * each check to see whether something was written.
   */
  readonly writesReported?: boolean;
}


/** Connections read per event-loop turn (before and after a snapshot). */
const SLICE = 1_000;

interface Watched {
  readonly key: string;
  readonly socket: MonitoredSocket;
  readonly limits: ProgressLimits;
  readonly onExceeded: (verdict: ProgressVerdict) => void;
  /** Every write to it is reported (`WatchOptions.writesReported`). */
  readonly reported: boolean;
  /** Reported and idle: left out of the checks until its next write (`ProgressWatch.wrote`). */
  quiet: boolean;
  /** The acknowledged count at the last progress, as an upper bound (bytes). */
  ackedBaseline: number;
  /** When its client last acknowledged something, or had nothing outstanding. */
  progressAt: number;
  /** Bytes handed to the kernel, read just before the snapshot. */
  sentBefore: number;
  /**
   * The bytes sent when a snapshot last found nothing outstanding and nothing written during it
   * (NaN: not known idle). While nothing more is sent, the connection is still idle.
   */
  idleSent: number;
  /** The kernel's queue in the latest snapshot, and which check found it. */
  kernelQueued: number;
  seenInCheck: number;
}

/**
 * Watches what the clients of push connections acknowledge, counting the bytes the kernel holds
 * for them: every `checkIntervalMs`, each connection's kernel send queue, from which its
 * acknowledged bytes are `sent to the kernel − kernel queue`. A connection idle since the last
 * check and sent nothing since (a quiet stream between its elements) is not read: one whose
 * writes are all reported (`WatchOptions.writesReported`) is not even visited until its next
 * write, any other has its counters compared with those of its last check. The others
 * are read one by one where the system lets a socket's queue be read (`SocketSendQueue`:
 * `ioctl(SIOCOUTQ)`, exact, since nothing is written between that read and the count of bytes
 * sent), and otherwise from one snapshot of every connection's (`KernelSendQueues`: one read of
 * `/proc/net/tcp`). A connection is reported (`onExceeded`) when its unacknowledged bytes pass
 * `maxQueueBytes`, or when its client acknowledged nothing for `stallTimeoutMs` while something
 * was outstanding; that is, within the limit plus one check, whatever the stream's rate, where a
 * `write()` refused only once the kernel has stopped growing the socket's buffer (up to 4 MiB,
 * past a quarter of an hour at a few kB/s).
 *
 * From a snapshot, acknowledged bytes are bracketed, not guessed: the bytes sent are read before
 * the snapshot and after it (each in slices of `SLICE` per turn), and progress counts only when
 * the lower bound passes the upper bound of the last progress, so that writes made during a
 * snapshot never look like a reader's progress. Where the system has no such table the monitor
 * stops (`supported` false) and only the refused-write stall timer of `GuardedSink` remains.
 */
export class SendProgressMonitor {
  readonly #queues: KernelSendQueues;
  readonly #perSocket: SocketSendQueue | undefined;
  readonly #clock: Clock;
  readonly #yield: () => Promise<unknown>;
  readonly #watched = new Map<string, Watched>();
  /** The watched connections a check visits: every one but the quiet ones. */
  readonly #unsettled = new Set<Watched>();
  #timer: unknown;
  #checks = 0;
  #supported = true;

  constructor(
    readonly checkIntervalMs: number,
    queues: KernelSendQueues = new ProcNetTcpSendQueues(),
    clock: Clock = monotonicClock,
    yieldTurn: () => Promise<unknown> = () => nextTurn(),
    /** Reads one socket's queue at once; undefined: every check that needs queues takes a snapshot. */
    perSocket?: SocketSendQueue,
  ) {
    this.#queues = queues;
    this.#perSocket = perSocket;
    this.#clock = clock;
    this.#yield = yieldTurn;
  }

  /** False once a snapshot found no table of kernel queues: nothing is watched any more. */
  get supported(): boolean {
    return this.#supported;
  }

  get size(): number {
    return this.#watched.size;
  }

  /** Watched connections that the next check visits (not quiet). */
  get unsettled(): number {
    return this.#unsettled.size;
  }

  /**
   * Watches `socket` until `stop` is called (on close, on eviction); calls `onExceeded` at each
   * check that finds it over `limits`, until then. Returns a watch that does nothing when the
   * socket's ends are unknown or the system has no kernel queues to read.
   */
  watch(socket: MonitoredSocket, limits: ProgressLimits, onExceeded: (verdict: ProgressVerdict) => void, options: WatchOptions = {}): ProgressWatch {
    const key = this.#supported ? keyOf(socket) : undefined;
    if (key === undefined) return NOT_WATCHED;
    const watched: Watched = {
      key,
      socket,
      limits,
      onExceeded,
      reported: options.writesReported === true,
      quiet: false,
      ackedBaseline: Number.NEGATIVE_INFINITY,
      progressAt: this.#clock.now(),
      sentBefore: 0,
      idleSent: Number.NaN,
      kernelQueued: 0,
      seenInCheck: -1,
    };
    // A connection watched anew (a keep-alive one whose requests were watched before) is one entry.
    const previous = this.#watched.get(key);
    if (previous !== undefined) this.#unsettled.delete(previous);
    this.#watched.set(key, watched);
    this.#unsettled.add(watched);
    this.#schedule();
    return {
      wrote: () => {
        if (!watched.quiet) return;
        // Idle until now: nothing was outstanding, so the wait for its client starts here.
        watched.quiet = false;
        watched.idleSent = Number.NaN;
        watched.progressAt = this.#clock.now();
        if (this.#watched.get(key) === watched) this.#unsettled.add(watched);
      },
      stop: () => {
        this.#unsettled.delete(watched);
        if (this.#watched.get(key) === watched) this.#watched.delete(key);
      },
    };
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#watched.size === 0 || !this.#supported) return;
    this.#timer = this.#clock.setTimeout(() => {
      this.check()
        .catch(() => undefined) // A failed snapshot is skipped: the next check takes another.
        .finally(() => {
          this.#timer = undefined;
          this.#schedule();
        });
    }, this.checkIntervalMs);
  }

  /** One check of every watched connection now; resolves when done (the timer's, or a test's). */
  async check(): Promise<void> {
    const check = ++this.#checks;
    const entries = [...this.#unsettled];
    /** Connections with something outstanding whose queue only a snapshot gives. */
    const fromTable: Watched[] = [];
    const perSocket = this.#perSocket;
    const started = this.#clock.now();
    await this.#inSlices(entries, (watched) => {
      const { socket } = watched;
      watched.sentBefore = sentToKernel(socket);
      if (watched.sentBefore === watched.idleSent && socket.writableLength === 0) {
        watched.progressAt = started;
        return;
      }
      const queued = perSocket?.queued(socket);
      if (queued === undefined) fromTable.push(watched);
      // Read together on the event loop: nothing was written to it in between.
      else this.#judge(watched, queued, watched.sentBefore, watched.sentBefore, this.#clock.now());
    });
    // Every connection idle since its last check (a quiet stream between elements), or read one by one.
    if (fromTable.length === 0) return;
    const byKey = this.#watched;
    const found = await this.#queues.snapshot((key, queuedBytes) => {
      const watched = byKey.get(key);
      if (watched === undefined) return;
      watched.kernelQueued = queuedBytes;
      watched.seenInCheck = check;
    });
    if (!found) {
      this.#supported = false;
      this.#watched.clear();
      this.#unsettled.clear();
      return;
    }
    const now = this.#clock.now();
    await this.#inSlices(fromTable, (watched) => {
      // Not in the table: closed meanwhile.
      if (watched.seenInCheck !== check) return;
      if (!Number.isFinite(watched.sentBefore)) return; // not a socket's counters (a test's stand-in)
      this.#judge(watched, watched.kernelQueued, watched.sentBefore, sentToKernel(watched.socket), now);
    });
  }

  /**
   * Judges one connection from its kernel queue `kernelQueued`, read after `sentBefore` bytes
   * had been handed to the kernel and before `sentAfter` had: progress counts only when what its
   * client acknowledged at least passes the most it could have acknowledged at the last progress.
   */
  #judge(watched: Watched, kernelQueued: number, sentBefore: number, sentAfter: number, now: number): void {
    const { socket, limits } = watched;
    const unacknowledged = kernelQueued + socket.writableLength;
    const ackedAtLeast = sentBefore - kernelQueued;
    if (unacknowledged === 0 || ackedAtLeast > watched.ackedBaseline) {
      watched.ackedBaseline = sentAfter - kernelQueued;
      watched.progressAt = now;
    }
    watched.idleSent = unacknowledged === 0 && sentAfter === sentBefore ? sentAfter : Number.NaN;
    if (watched.reported && !Number.isNaN(watched.idleSent)) {
      // Idle, and its next write will say so: not visited again until then.
      watched.quiet = true;
      this.#unsettled.delete(watched);
    }
    if (unacknowledged > limits.maxQueueBytes) watched.onExceeded('queue');
    else if (now - watched.progressAt >= limits.stallTimeoutMs) watched.onExceeded('stall');
  }

  /** Runs `visit` over `entries` still watched, `SLICE` per turn. */
  async #inSlices(entries: readonly Watched[], visit: (watched: Watched) => void): Promise<void> {
    for (let start = 0; start < entries.length; start += SLICE) {
      if (start > 0) await this.#yield();
      const end = Math.min(start + SLICE, entries.length);
      for (let index = start; index < end; index++) {
        const watched = entries[index] as Watched;
        if (this.#watched.get(watched.key) === watched) visit(watched);
      }
    }
  }
}

/** What `watch` returns for a connection it cannot watch. */
export const NOT_WATCHED: ProgressWatch = { wrote: () => undefined, stop: () => undefined };

/** Bytes that left the process for the kernel (those of a write still in progress excluded). */
const sentToKernel = (socket: MonitoredSocket) => socket.bytesWritten - socket.writableLength;

const shared = new Map<string, SendProgressMonitor>();

/**
 * The process's monitor for `checkIntervalMs` and `reader`: one check serves every stream and
 * every kind of push connection (SSE, notification receivers, held long-polls, any sink given
 * to a `GuardedSink`), however many publishers the process runs. `reader` 'auto' reads each
 * outstanding socket's queue with `ioctl(SIOCOUTQ)` where it can (`socketSendQueue`), 'table'
 * always from a snapshot of `/proc/net/tcp`.
 */
export function sharedSendProgressMonitor(checkIntervalMs: number, reader: SendQueueReaderChoice = defaults.subscriberSendQueueReader): SendProgressMonitor {
  const key = `${checkIntervalMs} ${reader}`;
  let monitor = shared.get(key);
  if (monitor === undefined) {
    // The constructor's own table reader, clock and yield; the per-socket reader of `reader`.
    monitor = new SendProgressMonitor(checkIntervalMs, undefined, undefined, undefined, socketSendQueue(reader));
    shared.set(key, monitor);
  }
  return monitor;
}

/**
 * Each connection's key, made once: a keep-alive connection whose long-polls are held one after
 * the other is watched anew for each (its ends never change while it is open).
 */
const keys = new WeakMap<MonitoredSocket, string | undefined>();

function keyOf(socket: MonitoredSocket): string | undefined {
  if (keys.has(socket)) return keys.get(socket);
  const key = connectionKey(socket);
  // Not yet connected (no ends to read): asked again next time.
  if (key !== undefined) keys.set(socket, key);
  return key;
}
