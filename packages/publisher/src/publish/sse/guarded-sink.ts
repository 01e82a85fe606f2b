import { Socket } from 'node:net';
import { type Clock, realClock } from '../../clock-and-logger.js';
import { defaults } from '../../config/defaults.js';
import { type MonitoredSocket, NOT_WATCHED, type ProgressWatch, type SendProgressMonitor, sharedSendProgressMonitor, type WatchOptions } from './send-progress-monitor.js';
import type { SendQueueReaderChoice } from './socket-send-queue.js';

/** The TCP connection under a sink: what its client acknowledged is read from it, and it is reset when cut. */
export interface SinkConnection extends MonitoredSocket {
  /** Closes the connection with a RST: the kernel drops what it still holds for it at once. */
  resetAndDestroy?(): unknown;
}

/**
 * The part of `http.ServerResponse` a push connection writes to (a fake in unit tests). A
 * `net.Socket` is one too (a raw connection, e.g. a WebSocket's).
 */
export interface SubscriberSink {
  /** The TCP connection under it, when there is one (a response's socket). */
  readonly socket?: SinkConnection | null;
  readonly writableLength: number;
  readonly destroyed: boolean;
  write(chunk: Buffer | string): boolean;
  end(chunk?: Buffer | string): unknown;
  destroy(): unknown;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
  /**
   * Cuts the connection telling the client why, where the transport can (a WebSocket close
   * frame); a sink without it is reset (see `GuardedSink.evict`). Not used for a stalled reader.
   */
  cut?(reason: EvictionReason): void;
  /**
   * Calls `listener` after each write the sink makes to its connection on its own, not through
   * `write` (a WebSocket's pong to its client's ping). A sink that makes none need not have it.
   */
  onOwnWrite?(listener: () => void): void;
}

/** How much a push connection may hold back before it is cut (its client can resume by id). */
export interface SubscriberQueueLimits {
  /** Bytes that may wait unsent in the process. */
  readonly maxQueueBytes: number;
  /**
   * Milliseconds the connection may refuse data (a write asked to wait for `drain`, i.e. the
   * kernel's socket buffers are full) without draining. Bounds what a reader that stopped
   * reading holds, kernel buffers included, whatever the stream's rate.
   */
  readonly stallTimeoutMs: number;
  /**
   * Milliseconds between two checks of what the client acknowledged, the bytes its kernel holds
   * counted (`SendProgressMonitor`): a connection is cut when those pass `maxQueueBytes`, or
   * when it acknowledged nothing for `stallTimeoutMs` while some were outstanding. 0: only
   * refused writes are watched. Default: `defaults.subscriberProgressCheckMs`.
   */
  readonly progressCheckMs?: number;
  /** How those checks read kernel send queues. Default: `defaults.subscriberSendQueueReader`. */
  readonly sendQueueReader?: SendQueueReaderChoice;
}

/** Why a connection was cut. */
export type EvictionReason = 'queue' | 'stall';

/** The TCP connection under `sink`: itself (a raw socket), or its `socket` (a response's). */
export function connectionOf(sink: SubscriberSink): SinkConnection | undefined {
  if (sink instanceof Socket) return sink;
  return sink.socket ?? undefined;
}

/**
 * Watches what the client of `connection` acknowledges, the kernel's queue counted, with the
 * process's monitor for `limits.progressCheckMs` and `limits.sendQueueReader` (or `monitor`);
 * calls `onExceeded` at a check that finds it over `limits`. Returns the watch, whose `stop`
 * ends it (it does nothing when nothing is watched: checks off, or no kernel queues to read on
 * this system).
 */
export function watchProgress(
  connection: MonitoredSocket,
  limits: SubscriberQueueLimits,
  onExceeded: (reason: EvictionReason) => void,
  monitor?: SendProgressMonitor,
  options?: WatchOptions,
): ProgressWatch {
  const checkMs = limits.progressCheckMs ?? defaults.subscriberProgressCheckMs;
  if (monitor === undefined && checkMs === 0) return NOT_WATCHED;
  const reader = limits.sendQueueReader ?? defaults.subscriberSendQueueReader;
  return (monitor ?? sharedSendProgressMonitor(checkMs, reader)).watch(connection, { maxQueueBytes: limits.maxQueueBytes, stallTimeoutMs: limits.stallTimeoutMs }, onExceeded, options);
}

/**
 * A push connection (an SSE subscriber, a notification receiver, a raw socket) with the two
 * limits every one has, counted in bytes its client has not acknowledged and in time without
 * progress: it is cut when its unsent bytes would pass `maxQueueBytes` (`wouldOverflow`, then
 * `evict`); when its socket refuses data for `stallTimeoutMs` without draining; and, where the
 * kernel's send queues can be read (`SendProgressMonitor`), at the first check that finds the
 * bytes its client has not acknowledged (in the process and in the kernel) over `maxQueueBytes`
 * or its client acknowledging nothing for `stallTimeoutMs`. A cut TCP connection is reset, so
 * that the kernel frees what it held for it at once. Cut, it reports why once; closed by its
 * client, it reports nothing.
 */
export class GuardedSink {
  #closed = false;
  #stallTimer: unknown;
  /** What its client acknowledges, watched; told of every write (`wrote`). */
  readonly #progress: ProgressWatch;
  readonly #limits: SubscriberQueueLimits;
  readonly #onEvicted: (reason: EvictionReason) => void;
  readonly #timers: Pick<Clock, 'setTimeout' | 'clearTimeout'>;
  /** Whether an element was written since the last heartbeat (`heartbeatDue`). */
  #elementSinceHeartbeat = false;

  constructor(
    readonly sink: SubscriberSink,
    limits: SubscriberQueueLimits,
    /** Called once when the connection is cut for holding too much (not on close). */
    onEvicted: (reason: EvictionReason) => void = () => undefined,
    /** The timers a stall is watched with (a clock in tests; its `now` is not used). */
    timers: Pick<Clock, 'setTimeout' | 'clearTimeout'> = realClock,
    /** The monitor of acknowledged bytes; default: the process's, for `limits.progressCheckMs`. */
    monitor?: SendProgressMonitor,
  ) {
    this.#limits = limits;
    this.#onEvicted = onEvicted;
    this.#timers = timers;
    const connection = connectionOf(sink);
    // Every write goes through `write` (or the sink's own, reported): an idle connection is
    // left out of the monitor's checks until its next write.
    this.#progress =
      connection === undefined ? NOT_WATCHED : watchProgress(connection, limits, (reason) => this.evict(reason), monitor, { writesReported: true });
    sink.onOwnWrite?.(this.#progress.wrote);
    sink.once('close', () => {
      this.#closed = true;
      this.#clearStall();
      this.#progress.stop();
    });
  }

  get closed(): boolean {
    return this.#closed || this.sink.destroyed;
  }

  /** Whether writing `bytes` more would exceed the queue limit. */
  wouldOverflow(bytes: number): boolean {
    return this.sink.writableLength + bytes > this.#limits.maxQueueBytes;
  }

  /**
   * Writes `frame`; returns false when the sink asks to wait for `drain`, and from then on cuts
   * the connection unless it drains within `stallTimeoutMs`.
   */
  write(frame: Buffer | string): boolean {
    const accepted = this.sink.write(frame);
    this.#progress.wrote();
    if (!accepted) this.#watchStall();
    return accepted;
  }

  /** Notes that an element was written to the connection (see `heartbeatDue`). */
  elementSent(): void {
    this.#elementSinceHeartbeat = true;
  }

  /**
   * Whether the heartbeat due now is to be written (an SSE comment, a WebSocket ping); starts
   * the next heartbeat interval. Not when an element was written since the last one while what
   * the client acknowledges is watched (`progressCheckMs` not 0): the element kept proxies from
   * timing out, and a peer that vanished leaves it unacknowledged and is cut for `stall`. A
   * stream busier than the heartbeat then costs no heartbeat write per connection, nor the check
   * of acknowledgements each write calls for.
   */
  heartbeatDue(): boolean {
    const skip = this.#elementSinceHeartbeat && this.#limits.progressCheckMs !== 0;
    this.#elementSinceHeartbeat = false;
    return !skip;
  }

  /** Cuts the connection at once: its client can resume by id. */
  evict(reason: EvictionReason = 'queue'): void {
    if (this.closed) return;
    this.#closed = true;
    this.#clearStall();
    this.#progress.stop();
    const connection = connectionOf(this.sink);
    // A reader that stopped reading (stall) would never read a goodbye: a reset frees the
    // kernel's buffers at once. Otherwise a sink with a close of its own (a WebSocket's 4008)
    // says why; any other is reset, or destroyed where it has no TCP connection to reset.
    if (reason === 'stall' && connection?.resetAndDestroy !== undefined) connection.resetAndDestroy();
    else if (this.sink.cut !== undefined) this.sink.cut(reason);
    else if (connection?.resetAndDestroy !== undefined) connection.resetAndDestroy();
    else this.sink.destroy();
    this.#onEvicted(reason);
  }

  /** Ends the stream after `farewell` (e.g. a `retry:` hint at shutdown). */
  close(farewell?: Buffer | string): void {
    this.#clearStall();
    this.#progress.stop();
    // A client gone before the stream ended may leave its socket half open: release it.
    if (this.closed) {
      this.sink.destroy();
      return;
    }
    this.#closed = true;
    this.sink.end(farewell);
  }

  /** Resolves when the sink has drained, or false if it closed (or was cut) first. */
  drained(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    this.#watchStall();
    return new Promise((resolve) => {
      const onDrain = () => {
        this.sink.off('close', onClose);
        resolve(true);
      };
      const onClose = () => {
        this.sink.off('drain', onDrain);
        resolve(false);
      };
      this.sink.once('drain', onDrain);
      this.sink.once('close', onClose);
    });
  }

  #watchStall(): void {
    if (this.#stallTimer !== undefined || this.closed) return;
    const onDrain = () => this.#clearStall();
    this.#stallTimer = this.#timers.setTimeout(() => {
      this.#stallTimer = undefined;
      this.sink.off('drain', onDrain);
      this.evict('stall');
    }, this.#limits.stallTimeoutMs);
    this.sink.once('drain', onDrain);
  }

  #clearStall(): void {
    if (this.#stallTimer === undefined) return;
    this.#timers.clearTimeout(this.#stallTimer);
    this.#stallTimer = undefined;
  }
}
