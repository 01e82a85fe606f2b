import { createParser, type EventSourceParser } from 'eventsource-parser';
import { EVENT_STREAM_MEDIA_TYPE, type FormatName, sseEvents } from '@rdf-stream/protocol';
import { type BackoffOptions, backoffDelay } from './backoff.js';
import { type FailedAnswer, failedAnswer } from './subscription-error.js';
import { serverGap } from './server-gap.js';
import type { TransportEvent } from './transport-event.js';
import type { TransportStats } from './transport-stats.js';

export interface SseSessionOptions {
  readonly format: FormatName;
  /** Resume after this id (sent as `Last-Event-ID`). */
  readonly lastEventId?: string;
  readonly backoff: BackoffOptions;
  /** Largest event accepted, in bytes; a larger one (or garbage without event ends) drops the connection. */
  readonly maxEventBytes: number;
  readonly stats: TransportStats;
}

/** What to do with an answer, by its status and content type: read the stream, or fail (try again after `reconnect()`'s delay, or give up). */
export type SseAnswer = { readonly kind: 'stream' } | FailedAnswer;

/**
 * One subscriber's Server-Sent Events protocol without I/O: the headers of each connection, what
 * an answer means, the events in the text received (elements, `gap`, `shed`, `retry:`, ids), and
 * how long to wait before connecting again (jittered exponential backoff, never sooner than the
 * server's `retry:`, `Retry-After` when the server sent one). `sseTransport` drives it over
 * `fetch`; the benchmark's fleet over raw sockets, so that both run the same protocol.
 */
export class SseSession {
  /** The id to resume after (`Last-Event-ID`). */
  lastEventId: string | undefined;
  /** Why the current connection ended or will end, for the `reconnect` event. */
  reason = 'stream ended';
  readonly #options: SseSessionOptions;
  readonly #emit: (event: TransportEvent) => void;
  #serverRetryMs = 0;
  #retryAfterMs: number | undefined;
  #attempt = 0;
  #pendingBytes = 0;
  #receivedAt = 0;
  #dropped = false;
  #parser: EventSourceParser;

  /** `emit` receives every element and gap in the order the server sent them. */
  constructor(options: SseSessionOptions, emit: (event: TransportEvent) => void) {
    this.#options = options;
    this.#emit = emit;
    this.lastEventId = options.lastEventId;
    this.#parser = this.#newParser();
  }

  /** The next connection's request headers; counts the request. */
  connecting(): Record<string, string> {
    this.#options.stats.requests++;
    this.#parser = this.#newParser();
    this.#pendingBytes = 0;
    this.#dropped = false;
    this.#retryAfterMs = undefined;
    this.reason = 'stream ended';
    return { accept: EVENT_STREAM_MEDIA_TYPE, ...(this.lastEventId === undefined ? {} : { 'last-event-id': this.lastEventId }) };
  }

  /** What the answer's status, `Content-Type` and `Retry-After` mean. */
  answered(status: number, contentType: string | undefined, retryAfter: string | undefined): SseAnswer {
    if (status < 200 || status > 299) {
      const failure = failedAnswer(status, retryAfter);
      if (failure.kind === 'retry') {
        this.#retryAfterMs = failure.retryAfterMs;
        this.reason = failure.reason;
      }
      return failure;
    }
    if (!(contentType ?? '').toLowerCase().startsWith(EVENT_STREAM_MEDIA_TYPE)) {
      this.reason = `not an event stream (${contentType ?? 'no content type'})`;
      return { kind: 'retry', reason: this.reason, retryAfterMs: undefined };
    }
    return { kind: 'stream' };
  }

  /**
   * Decoded text of the stream, as it arrives at `receivedAt` (client clock, ms): emits the
   * events it completes. False when the connection must be dropped (an event beyond
   * `maxEventBytes`, or the server shed this subscriber): `reason` says which.
   */
  received(text: string, receivedAt: number): boolean {
    if (this.#dropped) return false;
    this.#pendingBytes += text.length;
    if (this.#pendingBytes > this.#options.maxEventBytes) {
      this.reason = `event larger than ${this.#options.maxEventBytes} bytes`;
      this.#dropped = true;
      return false;
    }
    this.#receivedAt = receivedAt;
    this.#parser.feed(text);
    return !this.#dropped;
  }

  /** The connection ended or failed (`reason`, if not known already): the delay before the next one (ms). */
  reconnect(reason?: string): number {
    if (reason !== undefined && !this.#dropped) this.reason = reason;
    this.#options.stats.reconnects++;
    return this.#retryAfterMs ?? backoffDelay(this.#attempt++, this.#options.backoff, this.#serverRetryMs);
  }

  #newParser(): EventSourceParser {
    return createParser({
      onEvent: (event) => {
        // Nothing after a `shed` in the same chunk counts: the connection is being dropped.
        if (this.#dropped) return;
        this.#pendingBytes = 0;
        if (event.id !== undefined) this.lastEventId = event.id;
        if (event.event === sseEvents.gap) {
          this.#emit(serverGap(event.data));
        } else if (event.event === undefined || event.event === 'message') {
          this.#attempt = 0;
          this.#options.stats.elements++;
          this.#emit({
            type: 'element',
            text: event.data,
            format: this.#options.format,
            receivedAt: this.#receivedAt,
            ...(event.id === undefined ? {} : { id: event.id }),
          });
        } else if (event.event === sseEvents.shed) {
          this.reason = 'shed by the server';
          this.#dropped = true;
        }
      },
      onRetry: (retry) => {
        this.#serverRetryMs = retry;
      },
    });
  }
}

