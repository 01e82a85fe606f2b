import CachePolicy from 'http-cache-semantics';
import { type FormatName, mediaTypes } from '@rdf-stream/protocol';
import { type BackoffOptions, backoffDelay, delay } from './backoff.js';
import { httpFailure, RetryableHttpError } from './subscription-error.js';
import type { TransportEvent } from './transport-event.js';
import type { TransportStats } from './transport-stats.js';

export type PollStrategy = 'smart' | 'fixed';

export interface PollTransportOptions {
  readonly format: FormatName;
  /**
   * `smart`: ask again when the response stops being fresh (Cache-Control, Age, Expires, Date),
   * plus up to `jitterMs`, revalidating with If-None-Match. `fixed`: the study's clients — wait
   * `pollIntervalMs` after each response, and skip any request the cached response still answers.
   */
  readonly strategy: PollStrategy;
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

  while (!signal?.aborted) {
    let waitMs: number;
    try {
      const headers = policy ? { ...request.headers, ...(policy.revalidationHeaders(request) as Record<string, string>) } : request.headers;
      stats.requests++;
      const response = await fetchImpl(latestUrl, { headers, signal: signal ?? null });
      const responseLike = { status: response.status, headers: Object.fromEntries(response.headers) };
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
          stats.elements++;
          yield { type: 'element', text, format, receivedAt };
        }
      } else {
        throw await httpFailure(response, latestUrl);
      }
      attempt = 0;
      waitMs = strategy === 'smart' ? smartWait(policy, options, random) : options.pollIntervalMs;
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

function smartWait(policy: CachePolicy | undefined, options: PollTransportOptions, random: () => number): number {
  const freshMs = policy === undefined ? 0 : policy.timeToLive();
  return Math.max(options.minPollIntervalMs, freshMs) + Math.round(random() * options.jitterMs);
}
