import type { GapReason } from '@rdf-stream/protocol';
import type { LoggedElement } from '../../render/render-element.js';
import type { EvictionReason, SubscriberSink } from './guarded-sink.js';

/** How a subscriber is pushed to: Server-Sent Events (`/events`) or the data WebSocket (`/ws`). */
export type Transport = 'sse' | 'websocket';
export const transports: readonly Transport[] = Object.freeze(['sse', 'websocket']);

/** Why a subscriber was cut: its queue or stall limit (`GuardedSink`), or no pong to a WebSocket ping in time. */
export type CutReason = EvictionReason | 'pong';

/**
 * A message for every live subscriber that is not an element. One object per broadcast: each
 * transport builds its bytes from it once, on first use, for all its subscribers.
 */
export type BroadcastMessage =
  | { readonly kind: 'heartbeat' }
  | {
      readonly kind: 'gap';
      readonly requestedId: string;
      readonly epoch: string;
      /** The sequence number delivery goes on from. */
      readonly fromSeq: number;
      readonly reason: GapReason;
    };

/** The heartbeat, one object for the process's life (its bytes are memoised on it). */
export const HEARTBEAT: BroadcastMessage = Object.freeze({ kind: 'heartbeat' });

/**
 * One push connection of a stream, whatever its transport: the broadcaster and the catch-up
 * write elements and messages to it as shared bytes, never serialised for it alone. It is `live`
 * once it has been sent every retained element it asked for; `lastSentSeq` makes delivery
 * exactly-once at the seam between catch-up and live. Its queue and stall limits are those of
 * every push connection (`GuardedSink`).
 */
export interface PushSubscriber {
  live: boolean;
  lastSentSeq: number;
  readonly transport: Transport;
  /**
   * Fed each element's RDF Patch (`/patches`, `/ws?format=patch`) instead of the element: the broadcaster
   * and the catch-up build it (`preparePatch`, once per element) before `offer`/`sendElement`.
   */
  readonly patches: boolean;
  /** The connection: the broadcaster forgets the subscriber when it emits `close`. */
  readonly sink: SubscriberSink;
  readonly closed: boolean;
  /**
   * Broadcast: writes `element` unless its bytes would pass the queue limit, in which case the
   * subscriber is evicted instead. Returns whether it was written.
   */
  offer(element: LoggedElement): boolean;
  /** Broadcast: the same for a message. */
  offerMessage(message: BroadcastMessage): boolean;
  /** Catch-up: writes `element`; false when the connection asks to wait for `drained()`. */
  sendElement(element: LoggedElement): boolean;
  /** Catch-up: writes a message (a gap); false when the connection asks to wait. */
  sendMessage(message: BroadcastMessage): boolean;
  /** Shutdown: tells the client to come back after `retryMs` (and resume by id), then ends the connection. */
  shutdown(retryMs: number): void;
  /** Cuts the connection at once: it can resume by id. */
  evict(reason?: EvictionReason): void;
  /** Resolves when the connection has drained, or false if it closed (or was cut) first. */
  drained(): Promise<boolean>;
}

export const isElement = (chosen: LoggedElement | BroadcastMessage): chosen is LoggedElement => 'frames' in chosen;
