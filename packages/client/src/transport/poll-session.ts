import { type FormatName, mediaTypes, preferWait } from '@rdf-stream/protocol';
import { type BackoffOptions, backoffDelay } from './backoff.js';
import { adaptMargin, holdSeconds, lateHoldSeconds, type PollHints, type SmartPollOptions, smartPollDelay } from './poll-schedule.js';
import { type FailedAnswer, failedAnswer } from './subscription-error.js';
import { type AnswerHeaders, StoredAnswer } from './stored-answer.js';
import type { TransportStats } from './transport-stats.js';

export type PollStrategy = 'smart' | 'fixed';

export type { AnswerHeaders } from './stored-answer.js';

export interface PollSessionOptions {
  readonly format: FormatName;
  /**
   * `smart`: ask again when the next element is due (from `hints`: the newest element's time and
   * the stream's interval), after a learnt margin, plus up to `jitterMs`, asking the publisher to
   * hold the request until the element is served (`holdMs`), again at once when that wait runs out,
   * or backing off while it is late from a publisher that does not hold; without hints,
   * when the response stops being fresh (Cache-Control, Age, Expires, Date). Revalidates with
   * If-None-Match. `fixed`: the study's clients — wait `pollIntervalMs` after each response, and
   * skip any request the cached response still answers. See `smartPollDelay`.
   */
  readonly strategy: PollStrategy;
  /** What the smart strategy knows of the stream; read after each element is handed over. */
  readonly hints?: PollHints;
  readonly pollIntervalMs: number;
  readonly jitterMs: number;
  /** Shortest wait between two requests of the smart strategy (a stale or max-age=0 answer). */
  readonly minPollIntervalMs: number;
  /**
   * Smart strategy on a regular stream: ask before the next element is due, with `Prefer: wait`,
   * to be held until it comes (see `SmartPollOptions.hold`). A publisher that does not hold (or
   * a cache in front of it) answers such a request at once: after `NOT_HOLDING_AFTER` of those in
   * a row, the poller stops asking to be held and asks after the due moment instead.
   */
  readonly hold?: boolean;
  readonly backoff: BackoffOptions;
  readonly stats: TransportStats;
  readonly random?: () => number;
}

/** What an answer to a poll means: a new element (read its body), nothing new (304, the same ETag), or a failure. */
export type PollAnswer = { readonly kind: 'element' } | { readonly kind: 'unchanged' } | FailedAnswer;

/**
 * Answers in a row, to requests that asked to be held, that came back with nothing new before
 * half their wait had passed, after which a poller takes its publisher for one that does not hold
 * (a cache in front of it answers from its copy at once): two, so that one request answered at
 * once for another reason (the publisher at its `maxLongPollWaiters`, its shutdown) does not
 * turn holding off.
 */
export const NOT_HOLDING_AFTER = 2;

/** The answers without details, shared (a poller answers thousands of times). */
export const ELEMENT: PollAnswer = Object.freeze({ kind: 'element' });
export const UNCHANGED: PollAnswer = Object.freeze({ kind: 'unchanged' });

/** A poller or long-poller of `/latest` without I/O: what `latestTransport` and the benchmark's fleet drive. */
export interface LatestSession {
  /** The next request's headers; counts the request. */
  requesting(): Record<string, string>;
  /** What an answer means (read the body of an `element` after). */
  answered(status: number, headers: AnswerHeaders): PollAnswer;
  /** How long to wait before the next request after an answer (ms). */
  nextDelay(nowMs: number): number;
  /** True while a cached answer makes the next request needless. */
  readonly fresh: boolean;
  /** A failed request (`retryAfterMs` when the server asked for it): the delay before the next one (ms). */
  failed(retryAfterMs?: number): number;
  /** How long the publisher may hold the next request (ms; 0: it answers at once). */
  readonly holdMs: number;
}

/**
 * One poller of `GET {stream}/latest` without I/O: a client-side HTTP cache of the one answer
 * (RFC 9111, `StoredAnswer`) whose validators go with each request, each element handed over
 * once (a 304 or an unchanged ETag is not an update), and the wait before the next request
 * (`smartPollDelay`, the fixed interval, or backoff after a failure). `pollTransport` drives it
 * over `fetch`; the benchmark's fleet over undici, so that both poll the same way.
 */
export class PollSession implements LatestSession {
  readonly #options: PollSessionOptions;
  /** Read off the options once: a poller asks these on every answer. */
  readonly #fixed: boolean;
  /** The request's headers without a stored answer. */
  readonly #plain: Readonly<Record<string, string>>;
  readonly #stored = new StoredAnswer();
  /** The validating request's headers, rebuilt when the stored answer's validators change. */
  #revalidation: Readonly<Record<string, string>> | undefined;
  #revalidationEtag: string | undefined;
  #revalidationLastModified: string | undefined;
  /** Until when (client clock, ms) the stored answer is fresh, and (fixed strategy only) answers a request without one. */
  #freshUntilMs = 0;
  #satisfiesUntilMs = 0;
  /** The ETag of the last element handed over. */
  #lastEtag: string | undefined;
  #attempt = 0;
  /** Answers in a row that brought no new element. */
  #unchanged = 0;
  /** How long after an element is due to ask for it (ms): learnt, see `adaptMargin`. */
  #marginMs = 0;
  /** False once requests that asked to be held came back at once `NOT_HOLDING_AFTER` times in a row. */
  #publisherHolds = true;
  #answeredAtOnce = 0;
  /** The last request: when it went out (client clock, ms) and how long it asked to be held (ms; 0: not). */
  #askedAtMs = 0;
  #askedHoldMs = 0;
  /** The last answer had nothing new and came when the request's wait ran out (see `PollMoment.waitRanOut`). */
  #waitRanOut = false;
  /**
   * What `smartPollDelay` is told, `hold` (asking ahead, held) included; replaced, holding off,
   * when the publisher is found not to hold.
   */
  #schedule: SmartPollOptions;

  constructor(options: PollSessionOptions) {
    this.#options = options;
    this.#fixed = options.strategy === 'fixed';
    this.#plain = Object.freeze({ accept: mediaTypes[options.format] });
    this.#schedule = { jitterMs: options.jitterMs, minPollIntervalMs: options.minPollIntervalMs, hold: options.strategy === 'smart' && options.hold === true };
  }

  /** False once this poller found that its publisher answers requests that ask to be held at once (`NOT_HOLDING_AFTER`). */
  get publisherHolds(): boolean {
    return this.#publisherHolds;
  }

  /**
   * The next request's headers (with the cached answer's validators, and `Prefer: wait` when
   * holding); counts the request. The object may be shared between requests: do not modify it.
   */
  requesting(): Record<string, string> {
    this.#options.stats.requests++;
    const revalidation = this.#revalidation;
    this.#askedHoldMs = 0;
    if (revalidation === undefined) return this.#plain;
    const holdMs = this.holdMs;
    if (holdMs === 0 || this.#lastEtag === undefined) return revalidation;
    this.#askedAtMs = Date.now();
    this.#askedHoldMs = holdMs;
    return { ...revalidation, prefer: preferWait(holdMs / 1000) };
  }

  /**
   * How long the publisher may hold the next request (ms; 0: it answers at once): smart polling
   * of a regular stream whose newest element it knows, holding ahead (`holdSeconds`), or asking
   * at the due moment (`lateHoldSeconds`): an element not served yet when the request comes (it is
   * served a little after it is stamped) is answered the moment it is, in the same request, where
   * a 304 and a second request cost the publisher more and the client a round trip.
   */
  get holdMs(): number {
    if (this.#fixed || !this.#publisherHolds) return 0;
    const { hints, jitterMs } = this.#options;
    const intervalMs = hints?.expectedIntervalMs;
    if (hints?.generatedAtMs === undefined || !intervalMs || intervalMs <= 0) return 0;
    return (this.#schedule.hold === true ? holdSeconds(intervalMs, jitterMs) : lateHoldSeconds(intervalMs)) * 1000;
  }

  /** What an answer means; a 2xx or 304 updates the cache (read the body of an `element` after). */
  answered(status: number, headers: AnswerHeaders): PollAnswer {
    const nowMs = Date.now();
    if (status === 304 && this.#stored.stored) {
      this.#options.stats.notModified++;
      // A 304 that selects no stored answer leaves none: the next request asks without validators.
      if (!this.#stored.revalidate(headers, nowMs)) this.#stored.clear();
      this.#cached(nowMs);
      return this.#settled(false, nowMs);
    }
    if (status >= 200 && status <= 299) {
      this.#stored.store(status, headers, nowMs);
      this.#cached(nowMs);
      const etag = headers.etag as string | undefined;
      const changed = etag === undefined || etag !== this.#lastEtag;
      if (changed) {
        this.#lastEtag = etag;
        this.#options.stats.elements++;
      }
      return this.#settled(changed, nowMs);
    }
    return failedAnswer(status, headers['retry-after']);
  }

  /** How long to wait before the next request after an answer (ms). */
  nextDelay(nowMs: number): number {
    if (this.#fixed) return this.#options.pollIntervalMs;
    const { hints, random = Math.random } = this.#options;
    const moment = {
      nowMs,
      lateAttempts: this.#unchanged,
      freshForMs: Math.max(0, this.#freshUntilMs - nowMs),
      marginMs: this.#marginMs,
      waitRanOut: this.#waitRanOut,
      publisherHolds: this.#publisherHolds,
    };
    return smartPollDelay(hints ?? {}, moment, this.#schedule, random);
  }

  /** The fixed strategy's browser-like cache: true while the cached answer needs no request. */
  get fresh(): boolean {
    return Date.now() < this.#satisfiesUntilMs;
  }

  /** A failed request (`retryAfterMs` when the server asked for it): the delay before the next one (ms). */
  failed(retryAfterMs?: number): number {
    this.#options.stats.reconnects++;
    return retryAfterMs ?? backoffDelay(this.#attempt++, this.#options.backoff);
  }

  /** Reads off the stored answer what the next requests need. */
  #cached(nowMs: number): void {
    const stored = this.#stored;
    const { etag, lastModified } = stored;
    // The validators change with the stored answer's only: most answers (304s) keep the headers built before.
    if (this.#revalidation === undefined || etag !== this.#revalidationEtag || lastModified !== this.#revalidationLastModified) {
      // With If-None-Match, a server ignores If-Modified-Since (RFC 9110 §13.1.3): sent only without an ETag.
      const validators: Record<string, string> = etag !== undefined ? { 'if-none-match': etag } : lastModified !== undefined ? { 'if-modified-since': lastModified } : {};
      this.#revalidation = Object.freeze({ ...this.#plain, ...validators });
      this.#revalidationEtag = etag;
      this.#revalidationLastModified = lastModified;
    }
    this.#freshUntilMs = nowMs + stored.freshForMs(nowMs);
    this.#satisfiesUntilMs = this.#fixed && stored.reusable ? this.#freshUntilMs : 0;
  }

  #settled(changed: boolean, nowMs: number): PollAnswer {
    this.#attempt = 0;
    this.#waitRanOut = false;
    if (!changed && this.#askedHoldMs > 0) this.#heldWithNothingNew(nowMs - this.#askedAtMs, this.#askedHoldMs);
    if (changed) {
      // Only an element asked for at its due moment says something about the margin. The hints
      // still name the element before this one: it was due its interval after that one.
      const hints = this.#options.hints;
      if (hints?.generatedAtMs !== undefined) {
        const intervalMs = hints.expectedIntervalMs;
        const servedAfterDueMs = intervalMs ? nowMs - (hints.generatedAtMs + intervalMs - (hints.clockOffsetMs ?? 0)) : undefined;
        this.#marginMs = adaptMargin(this.#marginMs, this.#unchanged, intervalMs, servedAfterDueMs);
      }
      this.#unchanged = 0;
      return ELEMENT;
    }
    this.#unchanged++;
    return UNCHANGED;
  }

  /**
   * A request that asked to be held for `holdMs` came back with nothing new after `tookMs`: at
   * the end of its wait, the publisher held it; before half of it, it did not (see
   * `NOT_HOLDING_AFTER`), and once it has not so often in a row, this poller asks after the due
   * moment, unheld, from then on.
   */
  #heldWithNothingNew(tookMs: number, holdMs: number): void {
    if (tookMs >= holdMs / 2) {
      this.#answeredAtOnce = 0;
      this.#waitRanOut = true;
      return;
    }
    if (++this.#answeredAtOnce < NOT_HOLDING_AFTER) return;
    this.#publisherHolds = false;
    this.#schedule = { ...this.#schedule, hold: false };
  }
}
