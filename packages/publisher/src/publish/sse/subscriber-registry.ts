import { elementId } from '@rdf-stream/protocol';
import type { EventLog } from '../../log/event-log.js';
import { follow, isGap } from '../../log/follow-log.js';
import { Broadcaster } from './broadcaster.js';
import { type Feed, preparePatch } from './element-patches.js';
import type { CutReason, PushSubscriber } from './push-subscriber.js';
import type { ResumePlan } from './resume.js';
import type { SendQueueReaderChoice } from './socket-send-queue.js';
import type { StreamMetrics } from '../stream-metrics.js';
import type { EventStreamEncoder } from '../../render/event-stream-encoder.js';
import { Subscriber, type SubscriberSink } from './subscriber.js';
import { type WebSocketSink, WebSocketSubscriber } from './websocket-subscriber.js';

export interface SubscriberLimits {
  readonly broadcastBatchSize: number;
  readonly maxSubscribers: number;
  readonly maxSubscriberQueueBytes: number;
  /** Milliseconds a subscriber's socket may refuse data without draining before it is evicted. */
  readonly subscriberStallTimeoutMs: number;
  /** Milliseconds between two checks of what subscribers acknowledged (0: off; default: the process's default). */
  readonly subscriberProgressCheckMs?: number;
  readonly subscriberSendQueueReader?: SendQueueReaderChoice;
  /** Elements read from the log at a time while a subscriber catches up. */
  readonly catchUpBatchElements: number;
  /** Milliseconds a data WebSocket may take to answer a ping before it is cut. */
  readonly wsPongTimeoutMs: number;
}

/** Thrown by `subscribe` when `maxSubscribers` are already connected. */
export class TooManySubscribersError extends Error {
  override readonly name = 'TooManySubscribersError';
}

/**
 * A stream's push subscribers, SSE and WebSocket: each catches up from the log (from disk if it
 * must), then goes live and is fed by the broadcaster. `lastSentSeq` hands a subscriber over from catch-up to
 * live with no gap and no duplicate, whatever the interleaving.
 */
export class SubscriberRegistry {
  readonly broadcaster: Broadcaster;
  readonly #log: EventLog;
  readonly #limits: SubscriberLimits;
  readonly #onError: (error: unknown) => void;
  readonly #subscribersInProcess: () => number;
  readonly #onEvicted: (subscriber: PushSubscriber, reason: CutReason) => void;

  constructor(options: {
    readonly streamId: string;
    readonly log: EventLog;
    readonly metrics: StreamMetrics;
    readonly limits: SubscriberLimits;
    readonly onError: (error: unknown) => void;
    /** Subscribers counted against `maxSubscribers` (the process's, all streams together). */
    readonly subscribersInProcess?: () => number;
  }) {
    this.#log = options.log;
    this.#limits = options.limits;
    this.#onError = options.onError;
    this.broadcaster = new Broadcaster(options.log, {
      streamId: options.streamId,
      batchSize: options.limits.broadcastBatchSize,
      metrics: options.metrics,
    });
    this.#subscribersInProcess = options.subscribersInProcess ?? (() => this.broadcaster.size);
    this.#onEvicted = (subscriber, reason) => {
      this.broadcaster.remove(subscriber);
      options.metrics.subscriberEvicted(options.streamId, reason);
    };
  }

  /**
   * True when `maxSubscribers` are connected to this process (SSE and WebSocket subscribers
   * together: each holds a socket): a new subscriber is refused.
   */
  get full(): boolean {
    return this.#subscribersInProcess() >= this.#limits.maxSubscribers;
  }

  /**
   * Registers an SSE subscriber whose response headers are already written, sends what `plan`
   * asks to replay (respecting backpressure), then makes it live. Throws
   * `TooManySubscribersError` before writing anything if the limit is reached.
   */
  subscribe(sink: SubscriberSink, format: Feed, encoder: EventStreamEncoder, plan: ResumePlan): Subscriber {
    if (this.full) throw new TooManySubscribersError(`${this.#limits.maxSubscribers} subscribers are already connected`);
    const fromSeq = plan.kind === 'live' ? this.#log.latestSeq + 1 : plan.fromSeq;
    const subscriber = new Subscriber(
      sink,
      format,
      encoder,
      fromSeq - 1,
      this.#queueLimits(),
      this.#onEvicted,
    );
    this.#start(subscriber);
    return subscriber;
  }

  /**
   * Registers a data WebSocket whose handshake is done: the gap message first when `plan` says
   * elements were missed, then as `subscribe`. Throws `TooManySubscribersError` before writing
   * anything if the limit is reached.
   */
  subscribeWebSocket(sink: WebSocketSink, format: Feed, plan: ResumePlan): WebSocketSubscriber {
    if (this.full) throw new TooManySubscribersError(`${this.#limits.maxSubscribers} subscribers are already connected`);
    const fromSeq = plan.kind === 'live' ? this.#log.latestSeq + 1 : plan.fromSeq;
    const limits = { ...this.#queueLimits(), pongTimeoutMs: this.#limits.wsPongTimeoutMs };
    const subscriber = new WebSocketSubscriber(sink, format, fromSeq - 1, limits, this.#onEvicted);
    if (plan.kind === 'gap') {
      subscriber.sendMessage({ kind: 'gap', requestedId: plan.requestedId, epoch: this.#log.epoch, fromSeq: plan.fromSeq, reason: plan.reason });
    }
    this.#start(subscriber);
    return subscriber;
  }

  #queueLimits() {
    return {
      maxQueueBytes: this.#limits.maxSubscriberQueueBytes,
      stallTimeoutMs: this.#limits.subscriberStallTimeoutMs,
      progressCheckMs: this.#limits.subscriberProgressCheckMs,
      sendQueueReader: this.#limits.subscriberSendQueueReader,
    };
  }

  #start(subscriber: PushSubscriber): void {
    this.broadcaster.add(subscriber);
    this.#catchUp(subscriber).catch(this.#onError);
  }

  /**
   * Sends durable elements after `lastSentSeq` until none is left, then goes live (same turn:
   * `caughtUp` is read synchronously). An element the log no longer has reaches the subscriber
   * as the cursor's gap, and catch-up goes on after it. A reader that stops draining meanwhile is
   * evicted by its stall timer, as a live one is.
   */
  async #catchUp(subscriber: PushSubscriber): Promise<void> {
    const log = this.#log;
    const cursor = follow(log, subscriber.lastSentSeq);
    while (!subscriber.closed) {
      if (cursor.caughtUp) {
        subscriber.live = true;
        return;
      }
      const step = await cursor.next(this.#limits.catchUpBatchElements);
      if (subscriber.closed) return;
      if (isGap(step)) {
        subscriber.sendMessage({ kind: 'gap', requestedId: elementId(log.epoch, subscriber.lastSentSeq), epoch: log.epoch, fromSeq: step.to + 1, reason: step.reason });
        subscriber.lastSentSeq = step.to;
        continue;
      }
      for (const element of step) {
        if (subscriber.patches) await preparePatch(element, log);
        if (subscriber.closed) return;
        if (!subscriber.sendElement(element) && !(await subscriber.drained())) return;
      }
    }
  }
}
