import type { LoggedElement } from '../../render/render-element.js';
import {
  type EncodedFrame,
  elementFrame,
  encodedFrame,
  type EventStreamEncoder,
  type SseEncoding,
  type WireFrame,
  wireBytes,
} from '../../render/event-stream-encoder.js';
import { sseFrame } from '../../render/sse-frame.js';
import { type Feed, patchFrame } from './element-patches.js';
import { type EvictionReason, GuardedSink, type SubscriberQueueLimits, type SubscriberSink } from './guarded-sink.js';
import type { BroadcastMessage, PushSubscriber } from './push-subscriber.js';
import { gapFrame } from './resume.js';

export type { EvictionReason, SubscriberQueueLimits, SubscriberSink } from './guarded-sink.js';

/**
 * One SSE connection. It is `live` once it has been sent every retained element it asked for;
 * from then on the broadcaster writes to it. `lastSentSeq` makes delivery exactly-once at the
 * seam between replay and live, whatever the interleaving of the two. Its queue and stall
 * limits are those of every push connection (`GuardedSink`).
 *
 * A connection sent an element since the last heartbeat is not sent this one while the process
 * watches what clients acknowledge, as a data WebSocket is not pinged (`GuardedSink.heartbeatDue`).
 */
export class Subscriber implements PushSubscriber {
  readonly transport = 'sse';
  readonly patches: boolean;
  live = false;
  lastSentSeq: number;
  readonly #connection: GuardedSink;

  constructor(
    readonly sink: SubscriberSink,
    /** An RDF format (`/events`) or `patch` (`/patches`). */
    readonly format: Feed,
    readonly encoder: EventStreamEncoder,
    lastSentSeq: number,
    limits: SubscriberQueueLimits,
    /** Called once when the subscriber is cut for holding too much (not on close). */
    onEvicted: (subscriber: Subscriber, reason: EvictionReason) => void = () => undefined,
  ) {
    this.lastSentSeq = lastSentSeq;
    this.patches = format === 'patch';
    this.#connection = new GuardedSink(sink, limits, (reason) => onEvicted(this, reason));
  }

  get closed(): boolean {
    return this.#connection.closed;
  }

  /** Whether writing `bytes` more would exceed the queue limit. */
  wouldOverflow(bytes: number): boolean {
    return this.#connection.wouldOverflow(bytes);
  }

  get encoding(): SseEncoding {
    return this.encoder.encoding;
  }

  /**
   * `element`'s frame for this subscriber: its format (or its patch, which `preparePatch` must
   * have built), its encoding (shared with its peers).
   */
  frameOf(element: LoggedElement): WireFrame {
    if (this.format === 'patch') return patchFrame(element, this.encoder.encoding);
    return elementFrame(element, this.format, this.encoder.encoding);
  }

  /** Writes an element's frame (`frameOf`); returns false when the sink asks to wait for `drain`. */
  send(frame: WireFrame, seq: number): boolean {
    this.lastSentSeq = seq;
    this.#connection.elementSent();
    return this.#connection.write(this.encoder.encode(frame));
  }

  /**
   * Writes a message that is not an element (a heartbeat, a gap): one encoded for everyone, or
   * one of its own; see `GuardedSink.write`.
   */
  write(frame: WireFrame | EncodedFrame | string): boolean {
    return this.#connection.write(this.encoder.encode(frame));
  }

  offer(element: LoggedElement): boolean {
    const frame = this.frameOf(element);
    if (this.wouldOverflow(wireBytes(frame).length)) {
      this.evict('queue');
      return false;
    }
    this.send(frame, element.seq);
    return true;
  }

  offerMessage(message: BroadcastMessage): boolean {
    if (message.kind === 'heartbeat' && !this.#connection.heartbeatDue()) return true;
    const frame = sseMessageFrame(message)[this.encoding];
    if (this.wouldOverflow(wireBytes(frame).length)) {
      this.evict('queue');
      return false;
    }
    this.write(frame);
    return true;
  }

  sendElement(element: LoggedElement): boolean {
    return this.send(this.frameOf(element), element.seq);
  }

  sendMessage(message: BroadcastMessage): boolean {
    return this.write(sseMessageFrame(message));
  }

  /** `: shutting down` and `retry: {retryMs}`, then the end of the stream. */
  shutdown(retryMs: number): void {
    this.close(sseFrame({ comment: 'shutting down', retry: retryMs }));
  }

  /** Cuts the connection at once: it can resume by id. */
  evict(reason: EvictionReason = 'queue'): void {
    this.#connection.evict(reason);
  }

  /** Ends the stream after `farewell` (e.g. a `retry:` hint at shutdown). */
  close(farewell?: string): void {
    this.#connection.close(this.closed ? undefined : this.encoder.end(farewell));
  }

  /** Resolves when the sink has drained, or false if it closed (or was evicted) first. */
  drained(): Promise<boolean> {
    return this.#connection.drained();
  }
}

/** Each broadcast message's SSE frame in both encodings, made once for every subscriber. */
const messageFrames = new WeakMap<BroadcastMessage, EncodedFrame>();

/** A heartbeat is an empty comment; a gap, the `gap` event (`resume.ts`). */
function sseMessageFrame(message: BroadcastMessage): EncodedFrame {
  let frame = messageFrames.get(message);
  if (frame === undefined) {
    frame = encodedFrame(
      message.kind === 'heartbeat'
        ? sseFrame({ comment: '' })
        : gapFrame(message.requestedId, message.epoch, message.fromSeq, message.reason),
    );
    messageFrames.set(message, frame);
  }
  return frame;
}
