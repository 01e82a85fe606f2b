import { type FormatName, mediaTypes, preferWait } from '@rdf-stream/protocol';
import { type BackoffOptions, backoffDelay, delay } from './backoff.js';
import { httpFailure, RetryableHttpError } from './subscription-error.js';
import type { TransportEvent } from './transport-event.js';
import type { TransportStats } from './transport-stats.js';

export interface LongPollTransportOptions {
  readonly format: FormatName;
  /** `Prefer: wait=N`: how long the server may hold each request. */
  readonly waitSeconds: number;
  readonly backoff: BackoffOptions;
  readonly stats: TransportStats;
  readonly signal?: AbortSignal;
  readonly fetch?: typeof fetch;
}

/**
 * Long-polls `GET {stream}/latest` with `If-None-Match` and `Prefer: wait=N` (RFC 7240): the
 * server answers when the next element exists (200) or the wait ends (304, asked again at once).
 */
export async function* longPollTransport(latestUrl: string, options: LongPollTransportOptions): AsyncGenerator<TransportEvent> {
  const { format, waitSeconds, stats, signal, fetch: fetchImpl = fetch } = options;
  let etag: string | undefined;
  let attempt = 0;
  while (!signal?.aborted) {
    try {
      const headers: Record<string, string> = { accept: mediaTypes[format] };
      if (etag !== undefined) {
        headers['if-none-match'] = etag;
        headers.prefer = preferWait(waitSeconds);
      }
      stats.requests++;
      const response = await fetchImpl(latestUrl, { headers, signal: signal ?? null });
      if (response.status === 304) {
        stats.notModified++;
        await response.body?.cancel();
      } else if (response.ok) {
        const text = await response.text();
        const receivedAt = Date.now();
        const next = response.headers.get('etag') ?? undefined;
        if (next === undefined || next !== etag) {
          etag = next;
          stats.elements++;
          yield { type: 'element', text, format, receivedAt };
        }
      } else {
        throw await httpFailure(response, latestUrl);
      }
      attempt = 0;
    } catch (error) {
      if (signal?.aborted) return;
      if ((error as Error).name === 'SubscriptionError') throw error;
      stats.reconnects++;
      const waitMs = (error instanceof RetryableHttpError ? error.retryAfterMs : undefined) ?? backoffDelay(attempt++, options.backoff);
      yield { type: 'reconnect', reason: (error as Error).message, delayMs: waitMs };
      if (!(await delay(waitMs, signal))) return;
    }
  }
}
