import { randomBytes } from 'node:crypto';
import { elementId, webSocketCloseCodes } from '@rdf-stream/protocol';
import { type Clock, realClock } from '../../clock-and-logger.js';
import type { EventLog } from '../../log/event-log.js';
import { follow, isGap, type LogCursor } from '../../log/follow-log.js';
import type { LoggedElement } from '../../render/render-element.js';
import { notificationFrame, notificationObject, type NotificationSubject } from './solid-notification.js';
import { sseFrame } from '../../render/sse-frame.js';
import { messageFrames, PING_FRAME, type WebSocketFrames } from '../../render/websocket-frame.js';
import type { NotificationTopic, SubscriptionRequest } from './notification-request.js';
import { GuardedSink, type SubscriberSink } from '../sse/guarded-sink.js';
import { type ChannelType, EVENT_SOURCE_CHANNEL, WEB_SOCKET_CHANNEL } from './service-description.js';
import type { WebSocketSink } from '../sse/websocket-subscriber.js';
import type { ChannelRecord, ChannelStore } from './channel-store.js';
import { MemoryChannelStore } from './memory-channel-store.js';
import type { SendQueueReaderChoice } from '../sse/socket-send-queue.js';

/** Elements read from the log at a time when several became durable together (count). */
const notificationReadElements = 64;

/** A notification as a channel sends it: an SSE message, or a WebSocket text message's frames. */
type ChannelFrame = Buffer | WebSocketFrames;

export interface NotificationChannelsOptions {
  /** Each stream's log, by stream id: notifications are built from what it makes durable. */
  readonly logs: ReadonlyMap<string, EventLog>;
  readonly limits: {
    /** Channels open at once, connected or not, all streams and (with a shared store) all instances together (count). */
    readonly maxNotificationChannels: number;
    /** Unsent bytes a receiver may have queued before its connection is cut. */
    readonly maxSubscriberQueueBytes: number;
    /** Milliseconds a receiver's socket may refuse data without draining before it is cut. */
    readonly subscriberStallTimeoutMs: number;
    readonly subscriberProgressCheckMs?: number;
    readonly subscriberSendQueueReader?: SendQueueReaderChoice;
  };
  readonly onError: (error: unknown) => void;
  readonly clock?: Clock;
  /**
   * Where the channels are described: this process's memory by default (`MemoryChannelStore`),
   * or a `RedisChannelStore`, shared by every instance on one Redis and kept across restarts.
   */
  readonly store?: ChannelStore;
}

/** One channel (EventSourceChannel2023 or WebSocketChannel2023) as subscribed to: its stored description. */
export type NotificationChannel = ChannelRecord;

/** A channel this process holds a connection of: the record, and what lives only with the socket. */
interface LiveChannel {
  readonly record: ChannelRecord;
  readonly id: string;
  readonly channelType: ChannelType;
  readonly topic: NotificationTopic;
  readonly rateMs: number | undefined;
  /** The state the receiver is known to have: the record's, its `Last-Event-ID`, then the last sent. */
  knownState: string | undefined;
  /** The receiver's connection while one listens, with the queue and stall limits of SSE subscribers. */
  connection: GuardedSink | undefined;
  /** A WebSocketChannel2023's connection as a WebSocket (its compression, its close frames). */
  webSocket: WebSocketSink | undefined;
  lastEmitMs: number;
  /** Under `rate`: the newest notification held back, sent when the interval has passed. */
  pending: { frame: ChannelFrame; state: string } | undefined;
  pendingTimer: unknown;
  endTimer: unknown;
}

const ENDED = 'channel ended (endAt)';
const DELETED = 'channel deleted';

/**
 * The notification channels of a publisher, bounded by `maxNotificationChannels`. A channel's
 * description lives in a `ChannelStore`; its connection lives in the process that holds the
 * socket, which serves it from its own log: with a shared store, any instance serves any
 * channel's `receiveFrom`. Each stream's log announces its durable elements; each element's
 * notification bytes are built once per topic kind and written to every connected channel of
 * that stream ("persist, then dispatch"). A channel honours `state` on connection, `rate` by
 * holding back all but the newest notification, and `endAt` by ending its stream.
 *
 * A channel deleted (unsubscribed) on another instance is noticed here at the next heartbeat
 * (`heartbeat()`, every `heartbeatMs`): one request to the store for all the channels this
 * process holds connections of, and those it no longer has are closed. If the store cannot be
 * reached, connections stay open and are checked again at the next heartbeat.
 */
export class NotificationChannels {
  readonly #options: NotificationChannelsOptions;
  readonly #clock: Clock;
  readonly #store: ChannelStore;
  /** The channels this process holds a connection of, by id. */
  readonly #live = new Map<string, LiveChannel>();
  readonly #byStream = new Map<string, Set<LiveChannel>>();
  /** Per stream: reads still running, so that notifications keep the log's order. */
  readonly #queues = new Map<string, Promise<void>>();

  constructor(options: NotificationChannelsOptions) {
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#store = options.store ?? new MemoryChannelStore(this.#clock);
    for (const [streamId, log] of options.logs) {
      const cursor = follow(log, log.latestSeq);
      log.onAppended(() => this.#appended(streamId, log, cursor));
    }
  }

  /**
   * Opens a channel for a validated request; undefined when `maxNotificationChannels` are open.
   * Rejects with `ChannelStoreUnavailableError` when the store cannot be reached.
   */
  async open(request: SubscriptionRequest, channelType: ChannelType = EVENT_SOURCE_CHANNEL): Promise<NotificationChannel | undefined> {
    const channel: ChannelRecord = {
      id: randomBytes(16).toString('base64url'),
      channelType,
      topic: request.topic,
      endAtMs: request.endAtMs,
      rateMs: request.rateMs,
      knownState: request.state ?? this.#currentState(request.topic.streamId),
    };
    return (await this.#store.create(channel, this.#options.limits.maxNotificationChannels)) ? channel : undefined;
  }

  /**
   * Channel `id`, held here or read from the store; undefined if it ended, was deleted, never
   * existed, or is of a stream this publisher does not serve. Rejects with
   * `ChannelStoreUnavailableError` when the store cannot be reached.
   */
  async get(id: string): Promise<NotificationChannel | undefined> {
    const live = this.#live.get(id);
    if (live !== undefined) return live.record;
    const channel = await this.#store.get(id);
    return channel !== undefined && this.#options.logs.has(channel.topic.streamId) ? channel : undefined;
  }

  /**
   * Unsubscribes: deletes channel `id` from the store and closes its connection here at once
   * (elsewhere at their next heartbeat). False if it was not stored. Rejects with
   * `ChannelStoreUnavailableError` when the store cannot be reached.
   */
  async delete(id: string): Promise<boolean> {
    const deleted = await this.#store.delete(id);
    const live = this.#live.get(id);
    if (live !== undefined) void this.#end(live, sseFrame({ comment: DELETED }), [1000, DELETED], false);
    return deleted || live !== undefined;
  }

  /**
   * Hands `sink` (a hijacked response, its preamble written; for a WebSocketChannel2023 an open
   * WebSocket) to `channel` (as `get` read it), replacing any earlier connection of it in this
   * process. If the topic's state differs from `lastEventId` (a reconnection) or else from the
   * state the receiver is known to have, the current state is notified at once. Returns false
   * for an ended channel, or one of a stream this publisher does not serve.
   */
  connect(channel: NotificationChannel, sink: SubscriberSink | WebSocketSink, lastEventId?: string): boolean {
    const log = this.#options.logs.get(channel.topic.streamId);
    if (log === undefined || channel.endAtMs <= this.#clock.now()) return false;
    const live = this.#live.get(channel.id) ?? this.#hold(channel);
    const previous = live.connection;
    live.connection = undefined;
    previous?.sink.destroy();
    live.webSocket = 'closeWith' in sink ? sink : undefined;
    const limits = this.#options.limits;
    const forget = () => {
      if (live.connection !== connection) return;
      live.connection = undefined;
      void this.#release(live, true);
    };
    // Cut like an SSE subscriber: it reconnects with its Last-Event-ID.
    const connection = new GuardedSink(
      sink,
      { maxQueueBytes: limits.maxSubscriberQueueBytes, stallTimeoutMs: limits.subscriberStallTimeoutMs, progressCheckMs: limits.subscriberProgressCheckMs, sendQueueReader: limits.subscriberSendQueueReader },
      forget,
      this.#clock,
    );
    live.connection = connection;
    sink.once('close', forget);
    if (lastEventId !== undefined) live.knownState = lastEventId;
    const latest = log.latest();
    if (latest !== undefined && elementId(log.epoch, latest.seq) !== live.knownState) {
      this.#write(live, this.#frame(live, log, latest), elementId(log.epoch, latest.seq));
    }
    return true;
  }

  /**
   * Writes a comment (a ping to a WebSocket) to every connected receiver, so that proxies keep
   * idle streams open; then closes the connections of channels deleted elsewhere (one request
   * to the store). Rejects, leaving every connection open, when the store cannot be reached.
   */
  async heartbeat(): Promise<void> {
    const comment = sseFrame({ comment: '' });
    for (const channel of this.#live.values()) {
      if (channel.connection !== undefined) this.#send(channel, channel.webSocket === undefined ? comment : PING_FRAME);
    }
    const held = [...this.#live.values()];
    if (held.length === 0) return;
    const stored = await this.#store.stored(held.map((channel) => channel.id));
    for (const channel of held) {
      if (!stored.has(channel.id) && this.#live.get(channel.id) === channel) void this.#end(channel, sseFrame({ comment: DELETED }), [1000, DELETED], false);
    }
  }

  /**
   * Shutdown: ends every connection telling it to come back after `retryMs()` (SSE `retry:`,
   * WebSocket close 1012). The channels stay in the store (with a shared store, the receivers
   * come back to another instance or to this one restarted), each with its receiver's state.
   */
  async closeAll(retryMs: () => number): Promise<void> {
    const released: Array<Promise<void>> = [];
    for (const channel of [...this.#live.values()]) {
      const delay = retryMs();
      released.push(this.#end(channel, sseFrame({ comment: 'shutting down', retry: delay }), [webSocketCloseCodes.shutdown, JSON.stringify({ retryMs: delay })], true));
    }
    await Promise.all(released);
  }

  /** Holds `channel` in this process: its end timer, its place among its stream's channels. */
  #hold(channel: ChannelRecord): LiveChannel {
    const live: LiveChannel = {
      record: channel,
      id: channel.id,
      channelType: channel.channelType,
      topic: channel.topic,
      rateMs: channel.rateMs,
      knownState: channel.knownState,
      connection: undefined,
      webSocket: undefined,
      lastEmitMs: Number.NEGATIVE_INFINITY,
      pending: undefined,
      pendingTimer: undefined,
      endTimer: undefined,
    };
    live.endTimer = this.#clock.setTimeout(() => void this.#end(live, sseFrame({ comment: ENDED }), [1000, ENDED], false), channel.endAtMs - this.#clock.now());
    this.#live.set(live.id, live);
    let channels = this.#byStream.get(live.topic.streamId);
    if (channels === undefined) this.#byStream.set(live.topic.streamId, (channels = new Set()));
    channels.add(live);
    return live;
  }

  /**
   * Stops holding `channel` here (its connection is gone); with `keepState`, stores the state its
   * receiver is known to have if it changed, once per connection rather than per notification:
   * after a crash, a receiver that sends no `Last-Event-ID` may be told the newest state again.
   */
  #release(channel: LiveChannel, keepState: boolean): Promise<void> {
    this.#clock.clearTimeout(channel.endTimer);
    if (channel.pendingTimer !== undefined) this.#clock.clearTimeout(channel.pendingTimer);
    channel.pendingTimer = undefined;
    channel.pending = undefined;
    if (this.#live.get(channel.id) === channel) this.#live.delete(channel.id);
    this.#byStream.get(channel.topic.streamId)?.delete(channel);
    const state = channel.knownState;
    if (!keepState || state === undefined || state === channel.record.knownState) return Promise.resolve();
    return this.#store.setKnownState(channel.id, state).catch(this.#options.onError);
  }

  #currentState(streamId: string): string | undefined {
    const log = this.#options.logs.get(streamId);
    const latest = log?.latest();
    return log === undefined || latest === undefined ? undefined : elementId(log.epoch, latest.seq);
  }

  #appended(streamId: string, log: EventLog, cursor: LogCursor): void {
    const queued = this.#queues.get(streamId);
    if (!this.#byStream.get(streamId)?.size) {
      // Nobody to notify: these elements are nobody's (a read still running finishes its own).
      if (queued === undefined) cursor.skipTo(log.latestSeq);
      return;
    }
    if (queued === undefined) {
      const latest = cursor.nextLatest();
      if (latest !== undefined) this.#dispatch(streamId, log, [latest]);
      if (cursor.caughtUp) return;
    }
    // Several elements became durable together (group commit): read them, in order.
    const next = (queued ?? Promise.resolve())
      .then(() => this.#readOn(streamId, log, cursor))
      .catch(this.#options.onError)
      .finally(() => {
        if (this.#queues.get(streamId) === next) this.#queues.delete(streamId);
      });
    this.#queues.set(streamId, next);
  }

  /**
   * Notifies every element the cursor has not handed out yet. A gap (elements retention removed
   * before they were read) has no notification of its own in the Solid protocol: the next
   * notification carries the topic's newest state, which is all a receiver is promised.
   */
  async #readOn(streamId: string, log: EventLog, cursor: LogCursor): Promise<void> {
    while (!cursor.caughtUp) {
      const step = await cursor.next(notificationReadElements);
      if (!isGap(step)) this.#dispatch(streamId, log, step);
    }
  }

  #dispatch(streamId: string, log: EventLog, elements: readonly LoggedElement[]): void {
    for (const element of elements) {
      const state = elementId(log.epoch, element.seq);
      // Built once per element, topic and channel type, shared by every channel of that topic and type.
      const frames = new Map<string, ChannelFrame>();
      for (const channel of this.#byStream.get(streamId) ?? []) {
        const key = `${channel.channelType} ${channel.topic.iri}`;
        let frame = frames.get(key);
        if (frame === undefined) frames.set(key, (frame = this.#frame(channel, log, element)));
        this.#deliver(channel, frame, state);
      }
    }
  }

  /** The notification of `element` for `channel`'s topic, as an SSE message or a WebSocket text message (the JSON-LD alone). */
  #frame(channel: LiveChannel, log: EventLog, element: LoggedElement): ChannelFrame {
    const subject: NotificationSubject = {
      topic: channel.topic.iri,
      kind: channel.topic.kind,
      elementIri: element.graph,
      elementId: elementId(log.epoch, element.seq),
      generatedAt: element.generatedAt,
    };
    return channel.channelType === WEB_SOCKET_CHANNEL ? messageFrames(Buffer.from(JSON.stringify(notificationObject(subject)))) : notificationFrame(subject);
  }

  /** Sends now, or under `rate` keeps only the newest notification until the interval has passed. */
  #deliver(channel: LiveChannel, frame: ChannelFrame, state: string): void {
    if (channel.connection === undefined) return;
    const now = this.#clock.now();
    if (channel.rateMs === undefined || (channel.pending === undefined && now - channel.lastEmitMs >= channel.rateMs)) {
      this.#write(channel, frame, state);
      return;
    }
    channel.pending = { frame, state };
    channel.pendingTimer ??= this.#clock.setTimeout(() => {
      channel.pendingTimer = undefined;
      const pending = channel.pending;
      channel.pending = undefined;
      if (pending !== undefined && channel.connection !== undefined) this.#write(channel, pending.frame, pending.state);
    }, channel.lastEmitMs + channel.rateMs - now);
  }

  #write(channel: LiveChannel, frame: ChannelFrame, state: string): void {
    channel.lastEmitMs = this.#clock.now();
    if (this.#send(channel, frame)) channel.knownState = state;
  }

  /**
   * Writes `frame`; a receiver whose queue would exceed `maxSubscriberQueueBytes`, or whose
   * socket refuses data for `subscriberStallTimeoutMs` without draining, is cut (`GuardedSink`).
   */
  #send(channel: LiveChannel, frame: ChannelFrame | string): boolean {
    const connection = channel.connection;
    if (connection === undefined || connection.closed) return false;
    const bytes = typeof frame === 'string' || Buffer.isBuffer(frame) ? frame : channel.webSocket?.compressed ? frame.deflated() : frame.plain;
    if (connection.wouldOverflow(bytes.length)) {
      connection.evict('queue');
      return false;
    }
    connection.write(bytes);
    return true;
  }

  /**
   * Ends `channel`'s connection: after `farewell` (SSE), or with the close frame `close`
   * (WebSocket); and stops holding it here (see `#release`).
   */
  #end(channel: LiveChannel, farewell: string, close: readonly [code: number, reason: string], keepState: boolean): Promise<void> {
    const released = this.#release(channel, keepState);
    const connection = channel.connection;
    channel.connection = undefined;
    if (channel.webSocket === undefined) {
      connection?.close(farewell);
      return released;
    }
    if (connection !== undefined && !connection.closed) channel.webSocket.closeWith(...close);
    connection?.close();
    return released;
  }
}
