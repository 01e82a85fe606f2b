import { webSocketCloseCodes } from '@rdf-stream/protocol';
import type { LoggedElement } from '../../render/render-element.js';
import {
  elementFrames,
  gapMessage,
  messageFrames,
  PING_FRAME,
  type WebSocketFrames,
} from '../../render/websocket-frame.js';
import { type Feed, patchWebSocketFrames } from './element-patches.js';
import { type EvictionReason, GuardedSink, type SubscriberQueueLimits, type SubscriberSink } from './guarded-sink.js';
import type { BroadcastMessage, CutReason, PushSubscriber } from './push-subscriber.js';
import { gapOf } from './resume.js';

/**
 * A data WebSocket's connection as the publishing core writes to it (`http/websocket-sink.ts`
 * implements it over `ws`): frames built once are written to its socket as they are, and the
 * closing handshake and pongs are left to `ws`, whose own frames are whole writes too, so that
 * none lands inside another.
 */
export interface WebSocketSink extends SubscriberSink {
  /** Whether the connection takes the shared compressed frames (permessage-deflate negotiated as the publisher offers it). */
  readonly compressed: boolean;
  /**
   * Starts the closing handshake (a close frame with `code` and `reason`): the connection ends
   * when the client answers, or at the latest after the close timeout (`wsCloseTimeoutMs`).
   */
  closeWith(code: number, reason: string): void;
  /** Calls `listener` at every pong the client sends (its answer to a ping). */
  onPong(listener: () => void): void;
}

export interface WebSocketLimits extends SubscriberQueueLimits {
  /** Milliseconds the client may take to answer a ping before its connection is cut. */
  readonly pongTimeoutMs: number;
}

/** Each broadcast message's frames (a gap), made once for every WebSocket subscriber. */
const messageFramesOf = new WeakMap<BroadcastMessage, WebSocketFrames>();

/**
 * One data WebSocket (`GET /streams/{id}/ws`): a `PushSubscriber` whose bytes are WebSocket
 * frames — each element's text frame built once per format or patch (compressed once more for the sockets
 * that negotiated permessage-deflate), the heartbeat a ping — and whose queue and stall limits
 * are the SSE subscribers' (`GuardedSink`). A client that answers no ping within
 * `pongTimeoutMs` is cut without a closing handshake (it is not reading).
 *
 * A socket sent an element since the last heartbeat is not pinged when the process watches what
 * clients acknowledge (`GuardedSink.heartbeatDue`): only idle sockets are pinged, so a busy
 * stream costs no ping, pong or timer per socket.
 */
export class WebSocketSubscriber implements PushSubscriber {
  readonly transport = 'websocket';
  /** Fed each element's RDF Patch (`?format=patch`), which the broadcaster and the catch-up build first. */
  readonly patches: boolean;
  live = false;
  lastSentSeq: number;
  readonly #guard: GuardedSink;
  readonly #limits: WebSocketLimits;
  readonly #onCut: (subscriber: WebSocketSubscriber, reason: CutReason) => void;
  #pongTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly sink: WebSocketSink,
    /** An RDF format, or `patch`: each element's RDF Patch, the payload of `/patches`' events. */
    readonly format: Feed,
    lastSentSeq: number,
    limits: WebSocketLimits,
    /** Called once when the subscriber is cut (not on close). */
    onCut: (subscriber: WebSocketSubscriber, reason: CutReason) => void = () => undefined,
  ) {
    this.lastSentSeq = lastSentSeq;
    this.patches = format === 'patch';
    this.#limits = limits;
    this.#onCut = onCut;
    this.#guard = new GuardedSink(sink, limits, (reason) => onCut(this, reason));
    sink.onPong(() => this.#clearPongTimer());
    sink.once('close', () => this.#clearPongTimer());
  }

  get closed(): boolean {
    return this.#guard.closed;
  }

  offer(element: LoggedElement): boolean {
    return this.#offer(this.#bytes(this.#framesOf(element)), element.seq);
  }

  offerMessage(message: BroadcastMessage): boolean {
    if (message.kind === 'heartbeat' && !this.#guard.heartbeatDue()) return true;
    const written = this.#offer(this.#messageBytes(message));
    if (written && message.kind === 'heartbeat') this.#expectPong();
    return written;
  }

  sendElement(element: LoggedElement): boolean {
    this.lastSentSeq = element.seq;
    this.#guard.elementSent();
    return this.#guard.write(this.#bytes(this.#framesOf(element)));
  }

  sendMessage(message: BroadcastMessage): boolean {
    return this.#guard.write(this.#messageBytes(message));
  }

  /** Close 1012 with `{"retryMs":N}`: come back then and resume by the last id. */
  shutdown(retryMs: number): void {
    if (!this.closed) this.sink.closeWith(webSocketCloseCodes.shutdown, JSON.stringify({ retryMs }));
    this.#clearPongTimer();
    this.#guard.close();
  }

  /** Close 4008 `{"code":"evicted","reason":…}` (see `WebSocketSink.cut`), or a reset for `stall`: it can resume by id. */
  evict(reason: EvictionReason = 'queue'): void {
    this.#clearPongTimer();
    this.#guard.evict(reason);
  }

  drained(): Promise<boolean> {
    return this.#guard.drained();
  }

  #offer(bytes: Buffer, seq?: number): boolean {
    if (this.#guard.wouldOverflow(bytes.length)) {
      this.evict('queue');
      return false;
    }
    if (seq !== undefined) {
      this.lastSentSeq = seq;
      this.#guard.elementSent();
    }
    this.#guard.write(bytes);
    return true;
  }

  /** `element`'s frames for this feed, shared with every socket of the same feed. */
  #framesOf(element: LoggedElement): WebSocketFrames {
    return this.format === 'patch' ? patchWebSocketFrames(element) : elementFrames(element, this.format);
  }

  #bytes(frames: WebSocketFrames): Buffer {
    return this.sink.compressed ? frames.deflated() : frames.plain;
  }

  #messageBytes(message: BroadcastMessage): Buffer {
    if (message.kind === 'heartbeat') return PING_FRAME;
    let frames = messageFramesOf.get(message);
    if (frames === undefined) {
      frames = messageFrames(gapMessage(gapOf(message.requestedId, message.epoch, message.fromSeq, message.reason)));
      messageFramesOf.set(message, frames);
    }
    return this.#bytes(frames);
  }

  /** After a ping: cut the connection unless a pong comes within `pongTimeoutMs`. */
  #expectPong(): void {
    if (this.#pongTimer !== undefined) return;
    this.#pongTimer = setTimeout(() => {
      this.#pongTimer = undefined;
      if (this.closed) return;
      this.sink.destroy();
      this.#onCut(this, 'pong');
    }, this.#limits.pongTimeoutMs).unref();
  }

  #clearPongTimer(): void {
    clearTimeout(this.#pongTimer);
    this.#pongTimer = undefined;
  }
}
