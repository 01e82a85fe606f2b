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

/** Elements read from the log at a time when several became durable together (count). */
const notificationReadElements = 64;

/** A notification as a channel sends it: an SSE message, or a WebSocket text message's frames. */
type ChannelFrame = Buffer | WebSocketFrames;

export interface NotificationChannelsOptions {
  /** Each stream's log, by stream id: notifications are built from what it makes durable. */
  readonly logs: ReadonlyMap<string, EventLog>;
  readonly limits: {
    /** Channels open at once, connected or not (count). */
    readonly maxNotificationChannels: number;
    /** Unsent bytes a receiver may have queued before its connection is cut. */
    readonly maxSubscriberQueueBytes: number;
    /** Milliseconds a receiver's socket may refuse data without draining before it is cut. */
    readonly subscriberStallTimeoutMs: number;
    readonly subscriberProgressCheckMs?: number;
  };
  readonly onError: (error: unknown) => void;
  readonly clock?: Clock;
}

/** One channel (EventSourceChannel2023 or WebSocketChannel2023): a subscription and, while a receiver listens, its connection. */
export interface NotificationChannel {
  /** The unguessable last segment of `receiveFrom`. */
  readonly id: string;
  readonly channelType: ChannelType;
  readonly topic: NotificationTopic;
  readonly endAtMs: number;
  readonly rateMs: number | undefined;
}

interface OpenChannel extends NotificationChannel {
  /** The state the receiver is known to have: the one it sent, else the topic's at subscription, then the last sent. */
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

/**
 * The open notification channels of a publisher, bounded by `maxNotificationChannels`. Each
 * stream's log announces its durable elements; each element's notification bytes are built once
 * per topic kind and written to every connected channel of that stream ("persist, then
 * dispatch"). A channel honours `state` on connection, `rate` by holding back all but the newest
 * notification, and `endAt` by ending its stream and forgetting itself.
 */
export class NotificationChannels {
  readonly #options: NotificationChannelsOptions;
  readonly #clock: Clock;
  readonly #channels = new Map<string, OpenChannel>();
  readonly #byStream = new Map<string, Set<OpenChannel>>();
  /** Per stream: reads still running, so that notifications keep the log's order. */
  readonly #queues = new Map<string, Promise<void>>();

  constructor(options: NotificationChannelsOptions) {
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    for (const [streamId, log] of options.logs) {
      const cursor = follow(log, log.latestSeq);
      log.onAppended(() => this.#appended(streamId, log, cursor));
    }
  }

  get size(): number {
    return this.#channels.size;
  }

  get full(): boolean {
    return this.#channels.size >= this.#options.limits.maxNotificationChannels;
  }

  /** Opens a channel for a validated request; undefined when `maxNotificationChannels` are open. */
  open(request: SubscriptionRequest, channelType: ChannelType = EVENT_SOURCE_CHANNEL): NotificationChannel | undefined {
    if (this.full) return undefined;
    const channel: OpenChannel = {
      id: randomBytes(16).toString('base64url'),
      channelType,
      webSocket: undefined,
      topic: request.topic,
      endAtMs: request.endAtMs,
      rateMs: request.rateMs,
      knownState: request.state ?? this.#currentState(request.topic.streamId),
      connection: undefined,
      lastEmitMs: Number.NEGATIVE_INFINITY,
      pending: undefined,
      pendingTimer: undefined,
      endTimer: undefined,
    };
    channel.endTimer = this.#clock.setTimeout(
      () => this.#end(channel, sseFrame({ comment: 'channel ended (endAt)' }), [1000, 'channel ended (endAt)']),
      request.endAtMs - this.#clock.now(),
    );
    this.#channels.set(channel.id, channel);
    let channels = this.#byStream.get(channel.topic.streamId);
    if (channels === undefined) this.#byStream.set(channel.topic.streamId, (channels = new Set()));
    channels.add(channel);
    return channel;
  }

  get(id: string): NotificationChannel | undefined {
    return this.#channels.get(id);
  }

  /**
   * Hands `sink` (a hijacked response, its preamble written; for a WebSocketChannel2023 an open
   * WebSocket) to channel `id`, replacing any earlier connection. If the topic's state differs from `lastEventId` (a reconnection) or else
   * from the state the receiver is known to have, the current state is notified at once.
   * Returns false for an unknown or ended channel.
   */
  connect(id: string, sink: SubscriberSink | WebSocketSink, lastEventId?: string): boolean {
    const channel = this.#channels.get(id);
    if (channel === undefined) return false;
    const previous = channel.connection;
    channel.connection = undefined;
    previous?.sink.destroy();
    channel.webSocket = 'closeWith' in sink ? sink : undefined;
    const limits = this.#options.limits;
    const forget = () => {
      if (channel.connection === connection) channel.connection = undefined;
    };
    // Cut like an SSE subscriber: it reconnects with its Last-Event-ID.
    const connection = new GuardedSink(
      sink,
      { maxQueueBytes: limits.maxSubscriberQueueBytes, stallTimeoutMs: limits.subscriberStallTimeoutMs, progressCheckMs: limits.subscriberProgressCheckMs },
      forget,
      this.#clock,
    );
    channel.connection = connection;
    sink.once('close', forget);
    if (lastEventId !== undefined) channel.knownState = lastEventId;
    const log = this.#options.logs.get(channel.topic.streamId);
    const latest = log?.latest();
    if (log !== undefined && latest !== undefined && elementId(log.epoch, latest.seq) !== channel.knownState) {
      this.#write(channel, this.#frame(channel, log, latest), elementId(log.epoch, latest.seq));
    }
    return true;
  }

  /** Writes a comment (a ping to a WebSocket) to every connected receiver, so that proxies keep idle streams open. */
  heartbeat(): void {
    const comment = sseFrame({ comment: '' });
    for (const channel of this.#channels.values()) {
      if (channel.connection !== undefined) this.#send(channel, channel.webSocket === undefined ? comment : PING_FRAME);
    }
  }

  /**
   * Shutdown: ends every connection telling it to come back after `retryMs()` (SSE `retry:`,
   * WebSocket close 1012) and forgets every channel (they live in memory).
   */
  closeAll(retryMs: () => number): void {
    for (const channel of [...this.#channels.values()]) {
      const delay = retryMs();
      this.#end(channel, sseFrame({ comment: 'shutting down', retry: delay }), [webSocketCloseCodes.shutdown, JSON.stringify({ retryMs: delay })]);
    }
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
  #frame(channel: OpenChannel, log: EventLog, element: LoggedElement): ChannelFrame {
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
  #deliver(channel: OpenChannel, frame: ChannelFrame, state: string): void {
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

  #write(channel: OpenChannel, frame: ChannelFrame, state: string): void {
    channel.lastEmitMs = this.#clock.now();
    if (this.#send(channel, frame)) channel.knownState = state;
  }

  /**
   * Writes `frame`; a receiver whose queue would exceed `maxSubscriberQueueBytes`, or whose
   * socket refuses data for `subscriberStallTimeoutMs` without draining, is cut (`GuardedSink`).
   */
  #send(channel: OpenChannel, frame: ChannelFrame | string): boolean {
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

  /** Forgets `channel` and ends its connection: after `farewell` (SSE), or with the close frame `close` (WebSocket). */
  #end(channel: OpenChannel, farewell: string, close: readonly [code: number, reason: string]): void {
    this.#clock.clearTimeout(channel.endTimer);
    if (channel.pendingTimer !== undefined) this.#clock.clearTimeout(channel.pendingTimer);
    this.#channels.delete(channel.id);
    this.#byStream.get(channel.topic.streamId)?.delete(channel);
    const connection = channel.connection;
    channel.connection = undefined;
    if (channel.webSocket === undefined) {
      connection?.close(farewell);
      return;
    }
    if (connection !== undefined && !connection.closed) channel.webSocket.closeWith(...close);
    connection?.close();
  }
}
