import CachePolicy from 'http-cache-semantics';
import { type FormatName, mediaTypes } from '@rdf-stream/protocol';
import { type BackoffOptions, backoffDelay, delay } from './backoff.js';
import { adaptMargin, type PollHints, smartPollDelay } from './poll-schedule.js';
import { httpFailure, RetryableHttpError } from './subscription-error.js';
import type { TransportEvent } from './transport-event.js';
import type { TransportStats } from './transport-stats.js';

export type PollStrategy = 'smart' | 'fixed';

export interface PollTransportOptions {
  readonly format: FormatName;
  /**
   * `smart`: ask again when the next element is due (from `hints`: the newest element's time and
   * the stream's interval), plus up to `jitterMs`, backing off while it is late; without hints,
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
  readonly backoff: BackoffOptions;
  readonly stats: TransportStats;
  readonly signal?: AbortSignal;
  readonly fetch?: typeof fetch;
  readonly random?: () => number;
}

type PolicyRequest = { url: string; method: string; headers: Record<string, string> };

/**
 * Polls `GET {stream}/latest` with a client-side HTTP cache (RFC 9111 rules from
 * http-cache-semantics) and hands over each element once: a 304 or an unchanged ETag is not an
 * update. Throws `SubscriptionError` on a refusal (4xx).
 */
export async function* pollTransport(latestUrl: string, options: PollTransportOptions): AsyncGenerator<TransportEvent> {
  const { format, strategy, stats, signal, fetch: fetchImpl = fetch, random = Math.random } = options;
  const request: PolicyRequest = { url: latestUrl, method: 'GET', headers: { accept: mediaTypes[format] } };
  let policy: CachePolicy | undefined;
  let lastEtag: string | undefined;
  let attempt = 0;
  /** Answers in a row that brought no new element. */
  let unchanged = 0;
  /** How long after an element is due to ask for it (ms): learnt, see `adaptMargin`. */
  let marginMs = 0;

  while (!signal?.aborted) {
    let waitMs: number;
    try {
      const headers = policy ? { ...request.headers, ...(policy.revalidationHeaders(request) as Record<string, string>) } : request.headers;
      stats.requests++;
      const response = await fetchImpl(latestUrl, { headers, signal: signal ?? null });
      const responseLike = { status: response.status, headers: Object.fromEntries(response.headers) };
      let changed = false;
      if (response.status === 304 && policy) {
        stats.notModified++;
        policy = policy.revalidatedPolicy(request, responseLike).policy;
        await response.body?.cancel();
      } else if (response.ok) {
        const text = await response.text();
        const receivedAt = Date.now();
        policy = new CachePolicy(request, responseLike, { shared: false });
        const etag = response.headers.get('etag') ?? undefined;
        if (etag === undefined || etag !== lastEtag) {
          lastEtag = etag;
          changed = true;
          stats.elements++;
          yield { type: 'element', text, format, receivedAt };
        }
      } else {
        throw await httpFailure(response, latestUrl);
      }
      attempt = 0;
      if (changed) {
        // Only an element asked for at its due moment says something about the margin.
        if (options.hints?.generatedAtMs !== undefined) marginMs = adaptMargin(marginMs, unchanged, options.hints.expectedIntervalMs);
        unchanged = 0;
      } else unchanged++;
      waitMs =
        strategy === 'smart'
          ? smartPollDelay(options.hints ?? {}, { nowMs: Date.now(), lateAttempts: unchanged, freshForMs: policy?.timeToLive() ?? 0, marginMs }, options, random)
          : options.pollIntervalMs;
    } catch (error) {
      if (signal?.aborted) return;
      if ((error as Error).name === 'SubscriptionError') throw error;
      stats.reconnects++;
      waitMs = (error instanceof RetryableHttpError ? error.retryAfterMs : undefined) ?? backoffDelay(attempt++, options.backoff);
      yield { type: 'reconnect', reason: (error as Error).message, delayMs: waitMs };
    }
    if (!(await delay(waitMs, signal))) return;
    // The fixed strategy's browser-like cache: no request while the cached answer is fresh.
    while (strategy === 'fixed' && policy?.satisfiesWithoutRevalidation(request)) {
      if (!(await delay(options.pollIntervalMs, signal))) return;
    }
  }
}
