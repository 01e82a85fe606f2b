import { type FormatName, mediaTypes, preferWait } from '@rdf-stream/protocol';
import { type BackoffOptions, backoffDelay } from './backoff.js';
import { adaptMargin, holdSeconds, lateHoldSeconds, type PollHints, smartPollDelay } from './poll-schedule.js';
import { type FailedAnswer, failedAnswer } from './subscription-error.js';
import { type AnswerHeaders, StoredAnswer } from './stored-answer.js';
import type { TransportStats } from './transport-stats.js';

export type PollStrategy = 'smart' | 'fixed';

export type { AnswerHeaders } from './stored-answer.js';

export interface PollSessionOptions {
  readonly format: FormatName;
  /**
   * `smart`: ask again when the next element is due (from `hints`: the newest element's time and
   * the stream's interval), after a learnt margin, plus up to `jitterMs`; when that request finds
   * nothing new, at once again asking the publisher to hold it until the element is served
   * (`holdMs`), then backing off while it is late; without hints,
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
   * to be held until it comes (see `SmartPollOptions.hold`). A publisher that does not hold
   * answers 304 at once: the poller then backs off and learns a margin, as without it.
   */
  readonly hold?: boolean;
  readonly backoff: BackoffOptions;
  readonly stats: TransportStats;
  readonly random?: () => number;
}

/** What an answer to a poll means: a new element (read its body), nothing new (304, the same ETag), or a failure. */
export type PollAnswer = { readonly kind: 'element' } | { readonly kind: 'unchanged' } | FailedAnswer;

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
  readonly #holding: boolean;
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

  constructor(options: PollSessionOptions) {
    this.#options = options;
    this.#fixed = options.strategy === 'fixed';
    this.#holding = options.strategy === 'smart' && options.hold === true;
    this.#plain = Object.freeze({ accept: mediaTypes[options.format] });
  }

  /**
   * The next request's headers (with the cached answer's validators, and `Prefer: wait` when
   * holding); counts the request. The object may be shared between requests: do not modify it.
   */
  requesting(): Record<string, string> {
    this.#options.stats.requests++;
    const revalidation = this.#revalidation;
    if (revalidation === undefined) return this.#plain;
    const holdMs = this.holdMs;
    return holdMs > 0 && this.#lastEtag !== undefined ? { ...revalidation, prefer: preferWait(holdMs / 1000) } : revalidation;
  }

  /**
   * How long the publisher may hold the next request (ms; 0: it answers at once): smart polling
   * of a regular stream whose newest element it knows, holding ahead (`holdSeconds`), or asking
   * again for an element its last request did not find (`lateHoldSeconds`).
   */
  get holdMs(): number {
    if (this.#fixed || (!this.#holding && this.#unchanged === 0)) return 0;
    const { hints, jitterMs } = this.#options;
    const intervalMs = hints?.expectedIntervalMs;
    if (hints?.generatedAtMs === undefined || !intervalMs || intervalMs <= 0) return 0;
    return (this.#holding ? holdSeconds(intervalMs, jitterMs) : lateHoldSeconds(intervalMs)) * 1000;
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
    return smartPollDelay(hints ?? {}, { nowMs, lateAttempts: this.#unchanged, freshForMs: Math.max(0, this.#freshUntilMs - nowMs), marginMs: this.#marginMs }, this.#options, random);
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
}
