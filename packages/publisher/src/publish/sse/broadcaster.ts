import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { elementId } from '@rdf-stream/protocol';
import type { EventLog } from '../../log/event-log.js';
import type { LoggedElement } from '../../render/render-element.js';
import { preparePatch } from './element-patches.js';
import { type BroadcastMessage, HEARTBEAT, isElement, type PushSubscriber, type Transport } from './push-subscriber.js';
import type { StreamMetrics } from '../stream-metrics.js';

export interface BroadcasterOptions {
  readonly streamId: string;
  /** Subscribers written per event-loop turn. */
  readonly batchSize: number;
  readonly metrics: StreamMetrics;
  /** Yields to the event loop between batches; injectable for tests. */
  readonly yieldTurn?: () => Promise<unknown>;
}

/**
 * Writes each logged element's pre-built frame to every live subscriber (SSE and WebSocket
 * alike, each in its transport's shared bytes), in order, in batches that yield to the event
 * loop. The log is the queue: the pump follows `log.latestSeq`, so
 * nothing is buffered here and elements published during a broadcast are sent right after it.
 * A subscriber whose unsent bytes would exceed its limit is evicted, never buffered further; one
 * that stops draining is evicted by its own stall timer (see `Subscriber`).
 */
export class Broadcaster {
  readonly #log: EventLog;
  readonly #options: BroadcasterOptions;
  readonly #yield: () => Promise<unknown>;
  readonly #subscribers = new Set<PushSubscriber>();
  readonly #byTransport: Record<Transport, number> = { sse: 0, websocket: 0 };
  /** Subscribers fed patches (`/patches`): while there is one, each element's patch is built before it is written. */
  #patchSubscribers = 0;
  readonly #sizeListeners = new Set<() => void>();
  #cursor: number;
  #pumping: Promise<void> | undefined;

  constructor(log: EventLog, options: BroadcasterOptions) {
    this.#log = log;
    this.#options = options;
    this.#yield = options.yieldTurn ?? (() => nextTurn());
    this.#cursor = log.latestSeq;
  }

  get size(): number {
    return this.#subscribers.size;
  }

  /** Sequence number of the last element handed to every subscriber. */
  get broadcastSeq(): number {
    return this.#cursor;
  }

  /** Subscribers of one transport. */
  sizeOf(transport: Transport): number {
    return this.#byTransport[transport];
  }

  /**
   * Calls `listener` after each subscriber added or removed (what a test awaits instead of
   * polling `size`); returns the function that stops it.
   */
  onSizeChanged(listener: () => void): () => void {
    this.#sizeListeners.add(listener);
    return () => this.#sizeListeners.delete(listener);
  }

  add(subscriber: PushSubscriber): void {
    this.#subscribers.add(subscriber);
    if (subscriber.patches) this.#patchSubscribers++;
    subscriber.sink.once('close', () => this.remove(subscriber));
    this.#changed(subscriber.transport, 1);
  }

  remove(subscriber: PushSubscriber): void {
    if (this.#subscribers.delete(subscriber)) {
      if (subscriber.patches) this.#patchSubscribers--;
      this.#changed(subscriber.transport, -1);
    }
  }

  #changed(transport: Transport, by: number): void {
    this.#byTransport[transport] += by;
    const { metrics, streamId } = this.#options;
    metrics.subscribersChanged(streamId, this.#subscribers.size);
    metrics.transportSubscribersChanged(streamId, transport, this.#byTransport[transport]);
    for (const listener of this.#sizeListeners) listener();
  }

  /** Called after each append: starts the pump unless it is already running. Resolves when idle. */
  notify(): Promise<void> {
    this.#pumping ??= this.#pump().finally(() => {
      this.#pumping = undefined;
    });
    return this.#pumping;
  }

  async #pump(): Promise<void> {
    while (this.#cursor < this.#log.latestSeq) {
      const element = await this.#log.get(this.#cursor + 1);
      if (element === undefined) {
        // Retention is smaller than the backlog (or the element cannot be read): tell
        // subscribers, continue from the oldest retained element, and past this one at least.
        const resumeAt = Math.max(this.#log.oldestSeq ?? this.#log.latestSeq, this.#cursor + 2);
        const { epoch } = this.#log;
        const gap: BroadcastMessage = { kind: 'gap', requestedId: elementId(epoch, this.#cursor), epoch, fromSeq: resumeAt, reason: 'expired' };
        await this.#writeAll(() => gap);
        this.#cursor = resumeAt - 1;
        continue;
      }
      const started = performance.now();
      if (this.#patchSubscribers > 0) await preparePatch(element, this.#log);
      const { written, cpuMicros } = await this.#writeAll((subscriber) =>
        subscriber.lastSentSeq < element.seq ? element : undefined,
      );
      this.#cursor = element.seq;
      this.#options.metrics.broadcastFinished(this.#options.streamId, (performance.now() - started) / 1000, written, cpuMicros / 1e6);
    }
  }

  /**
   * Writes the heartbeat to every live subscriber (keeps proxies and clients from timing out):
   * an empty SSE comment, a WebSocket ping.
   */
  async heartbeat(): Promise<void> {
    await this.#writeAll(() => HEARTBEAT);
  }

  /**
   * A new life of the log (`EventLog.onEpochChanged`): ends every subscriber's stream, telling it
   * to come back after `retryMs()` — it comes back with the id it last received, of the old
   * epoch, and gets the explicit `epoch` gap — and broadcasts the new life from its start.
   */
  async restart(retryMs: () => number): Promise<void> {
    this.#cursor = this.#log.latestSeq;
    await this.closeAll(retryMs);
  }

  /**
   * Ends every subscriber's stream telling it to come back after `retryMs()` (called once per
   * subscriber, so that the delays spread), in batches.
   */
  async closeAll(retryMs: () => number): Promise<void> {
    const snapshot = [...this.#subscribers];
    for (let start = 0; start < snapshot.length; start += this.#options.batchSize) {
      for (const subscriber of snapshot.slice(start, start + this.#options.batchSize)) {
        subscriber.shutdown(retryMs());
      }
      await this.#yield();
    }
  }

  /**
   * Writes to each live subscriber what `choose` returns (an element or a message, in the
   * subscriber's transport, format and encoding: bytes shared with its peers), over a snapshot
   * of the subscribers, `batchSize` per turn; one whose queue would overflow is evicted. Returns
   * how many subscribers were written to, and the CPU time of the batches (µs, process-wide,
   * yields excluded).
   */
  async #writeAll(choose: (subscriber: PushSubscriber) => LoggedElement | BroadcastMessage | undefined): Promise<{ written: number; cpuMicros: number }> {
    const snapshot = [...this.#subscribers];
    const { batchSize } = this.#options;
    let written = 0;
    let cpuMicros = 0;
    for (let start = 0; start < snapshot.length; start += batchSize) {
      const end = Math.min(start + batchSize, snapshot.length);
      const cpuBefore = process.cpuUsage();
      for (let index = start; index < end; index++) {
        const subscriber = snapshot[index] as PushSubscriber;
        if (!subscriber.live || subscriber.closed) continue;
        const chosen = choose(subscriber);
        if (chosen === undefined) continue;
        if (isElement(chosen) ? subscriber.offer(chosen) : subscriber.offerMessage(chosen)) written++;
      }
      // Work the writes deferred to the next tick (Node uncorks a response, and ends a write,
      // there) belongs to the batch: count it before taking the time.
      await afterDeferredWrites();
      const cpu = process.cpuUsage(cpuBefore);
      cpuMicros += cpu.user + cpu.system;
      if (end < snapshot.length) await this.#yield();
    }
    return { written, cpuMicros };
  }
}

/** Resolves once the callbacks already queued with `process.nextTick` have run. */
const afterDeferredWrites = () => new Promise<void>((resolve) => process.nextTick(resolve));

