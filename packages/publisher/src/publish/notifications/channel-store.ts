import type { NotificationTopic } from './notification-request.js';
import type { ChannelType } from './service-description.js';

/**
 * What a notification channel is, apart from any connection: enough for any publisher instance
 * to serve its `receiveFrom` from its own log. Its connection (socket, rate timer, queue) stays
 * in the process that holds the socket.
 */
export interface ChannelRecord {
  /** The unguessable last segment of `receiveFrom`. */
  readonly id: string;
  readonly channelType: ChannelType;
  readonly topic: NotificationTopic;
  /** When the channel ends (milliseconds since the epoch). */
  readonly endAtMs: number;
  /** Least milliseconds between two notifications (`notify:rate`), if asked. */
  readonly rateMs: number | undefined;
  /**
   * The state the receiver is known to have: the one it subscribed with, else the topic's at
   * subscription; updated when a connection ends (not at each notification), so that a
   * WebSocket receiver, which sends no `Last-Event-ID`, is not told again what it was told.
   */
  readonly knownState: string | undefined;
}

/**
 * Where the channels are described: this process's memory (`MemoryChannelStore`) or a Redis
 * shared by every instance of the publisher (`RedisChannelStore`). A record is gone once
 * deleted or once its `endAtMs` has passed, whoever asks.
 */
export interface ChannelStore {
  /**
   * Stores `record` unless `maxChannels` unended channels are stored (all streams together);
   * the check and the write are one step, whatever the number of instances. False when full.
   */
  create(record: ChannelRecord, maxChannels: number): Promise<boolean>;
  /** The record of channel `id`, or undefined if it was deleted, has ended or never existed. */
  get(id: string): Promise<ChannelRecord | undefined>;
  /** Forgets channel `id`; false if it was not stored. */
  delete(id: string): Promise<boolean>;
  /** Unended channels stored (count), all streams together. */
  count(): Promise<number>;
  /** Of `ids`, those still stored and unended, in one request whatever their number. */
  stored(ids: readonly string[]): Promise<Set<string>>;
  /** Records the state the receiver of channel `id` is known to have; nothing if the channel is gone. */
  setKnownState(id: string, state: string): Promise<void>;
}

/** The store could not be read or written (Redis unreachable, or too slow): nothing was changed, or its outcome is unknown. */
export class ChannelStoreUnavailableError extends Error {
  override readonly name = 'ChannelStoreUnavailableError';

  constructor(options?: { cause?: unknown }) {
    super('The notification channel store is unavailable', options);
  }
}
