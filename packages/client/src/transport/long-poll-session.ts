import { type FormatName, mediaTypes, preferWait } from '@rdf-stream/protocol';
import { type BackoffOptions, backoffDelay } from './backoff.js';
import { type AnswerHeaders, ELEMENT, type LatestSession, type PollAnswer, UNCHANGED } from './poll-session.js';
import { failedAnswer } from './subscription-error.js';
import type { TransportStats } from './transport-stats.js';

export interface LongPollSessionOptions {
  readonly format: FormatName;
  /** `Prefer: wait=N`: how long the server may hold each request. */
  readonly waitSeconds: number;
  readonly backoff: BackoffOptions;
  readonly stats: TransportStats;
}

/**
 * One long-poller of `GET {stream}/latest` without I/O: `If-None-Match` and `Prefer: wait=N`
 * (RFC 7240) once it holds an element, each element handed over once, asked again at once after
 * an answer and after backoff (or `Retry-After`) after a failure. `longPollTransport` drives it
 * over `fetch`; the benchmark's fleet over undici.
 */
export class LongPollSession implements LatestSession {
  readonly #options: LongPollSessionOptions;
  #etag: string | undefined;
  #attempt = 0;

  constructor(options: LongPollSessionOptions) {
    this.#options = options;
  }

  /** How long the publisher may hold a request (ms), beyond which the caller may time it out. */
  get holdMs(): number {
    return this.#options.waitSeconds * 1000;
  }

  /** Asked again at once after an answer. */
  nextDelay(): number {
    return 0;
  }

  /** Never: each request waits for what follows. */
  get fresh(): boolean {
    return false;
  }

  /** The next request's headers; counts the request. */
  requesting(): Record<string, string> {
    this.#options.stats.requests++;
    const headers: Record<string, string> = { accept: mediaTypes[this.#options.format] };
    if (this.#etag !== undefined) {
      headers['if-none-match'] = this.#etag;
      headers.prefer = preferWait(this.#options.waitSeconds);
    }
    return headers;
  }

  /** What an answer means: a new element (read its body), nothing new (304: ask again at once), or a failure. */
  answered(status: number, headers: AnswerHeaders): PollAnswer {
    if (status === 304) {
      this.#options.stats.notModified++;
      this.#attempt = 0;
      return UNCHANGED;
    }
    if (status >= 200 && status <= 299) {
      this.#attempt = 0;
      const next = headers.etag as string | undefined;
      if (next !== undefined && next === this.#etag) return UNCHANGED;
      this.#etag = next;
      this.#options.stats.elements++;
      return ELEMENT;
    }
    return failedAnswer(status, headers['retry-after']);
  }

  /** A failed request (`retryAfterMs` when the server asked for it): the delay before the next one (ms). */
  failed(retryAfterMs?: number): number {
    this.#options.stats.reconnects++;
    return retryAfterMs ?? backoffDelay(this.#attempt++, this.#options.backoff);
  }
}
