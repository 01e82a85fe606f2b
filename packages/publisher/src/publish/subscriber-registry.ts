import { elementId } from '@rdf-stream/protocol';
import type { EventLog } from '../log/event-log.js';
import { Broadcaster } from './broadcaster.js';
import { type Feed, preparePatch } from './element-patches.js';
import { gapFrame, type ResumePlan } from './resume.js';
import type { StreamMetrics } from './stream-metrics.js';
import type { EventStreamEncoder } from '../render/event-stream-encoder.js';
import { type EvictionReason, Subscriber, type SubscriberSink } from './subscriber.js';

export interface SubscriberLimits {
  readonly broadcastBatchSize: number;
  readonly maxSubscribers: number;
  readonly maxSubscriberQueueBytes: number;
  /** Milliseconds a subscriber's socket may refuse data without draining before it is evicted. */
  readonly subscriberStallTimeoutMs: number;
  /** Elements read from the log at a time while a subscriber catches up. */
  readonly catchUpBatchElements: number;
}

/** Thrown by `subscribe` when `maxSubscribers` are already connected. */
export class TooManySubscribersError extends Error {
  override readonly name = 'TooManySubscribersError';
}

/**
 * A stream's SSE subscribers: each catches up from the log (from disk if it must), then goes
 * live and is fed by the broadcaster. `lastSentSeq` hands a subscriber over from catch-up to
 * live with no gap and no duplicate, whatever the interleaving.
 */
export class SubscriberRegistry {
  readonly broadcaster: Broadcaster;
  readonly #log: EventLog;
  readonly #limits: SubscriberLimits;
  readonly #onError: (error: unknown) => void;
  readonly #subscribersInProcess: () => number;
  readonly #onEvicted: (subscriber: Subscriber, reason: EvictionReason) => void;

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

  /** True when `maxSubscribers` are connected to this process: a new subscriber is refused. */
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
      { maxQueueBytes: this.#limits.maxSubscriberQueueBytes, stallTimeoutMs: this.#limits.subscriberStallTimeoutMs },
      this.#onEvicted,
    );
    this.broadcaster.add(subscriber);
    this.#catchUp(subscriber).catch(this.#onError);
    return subscriber;
  }

  /**
   * Sends durable elements after `lastSentSeq` until none is left, then goes live (same turn).
   * A reader that stops draining meanwhile is evicted by its stall timer, as a live one is.
   */
  async #catchUp(subscriber: Subscriber): Promise<void> {
    const log = this.#log;
    while (!subscriber.closed) {
      const seq = subscriber.lastSentSeq + 1;
      if (seq > log.latestSeq) {
        subscriber.live = true;
        return;
      }
      const elements = await log.read(seq, this.#limits.catchUpBatchElements);
      if (subscriber.closed) return;
      if (elements[0]?.seq !== seq) {
        // Retention removed it meanwhile (or it cannot be read): say so, go on from the oldest
        // retained element, and past this one at least, so that catch-up always progresses.
        const resumeAt = Math.max(log.oldestSeq ?? log.latestSeq + 1, seq + 1);
        subscriber.write(gapFrame(elementId(log.epoch, subscriber.lastSentSeq), log.epoch, resumeAt, 'expired'));
        subscriber.lastSentSeq = resumeAt - 1;
        continue;
      }
      for (const element of elements) {
        if (subscriber.format === 'patch') await preparePatch(element, log);
        if (subscriber.closed) return;
        if (!subscriber.send(subscriber.frameOf(element), element.seq) && !(await subscriber.drained())) return;
      }
    }
  }
}
