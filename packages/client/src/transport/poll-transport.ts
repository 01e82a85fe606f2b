import { delay } from './backoff.js';
import { networkFailure } from './network-error.js';
import { LongPollSession, type LongPollSessionOptions } from './long-poll-session.js';
import { type LatestSession, PollSession, type PollSessionOptions } from './poll-session.js';
import { RetryableHttpError, refusal } from './subscription-error.js';
import type { TransportEvent } from './transport-event.js';

export type { PollStrategy } from './poll-session.js';

interface FetchOptions {
  readonly signal?: AbortSignal;
  readonly fetch?: typeof fetch;
}

export interface PollTransportOptions extends PollSessionOptions, FetchOptions {}
export interface LongPollTransportOptions extends LongPollSessionOptions, FetchOptions {}

/**
 * Polls `GET {stream}/latest` over `fetch`: the I/O around `PollSession` (a client-side HTTP
 * cache, each element handed over once, the wait before each request). Throws
 * `SubscriptionError` on a refusal (4xx).
 */
export function pollTransport(latestUrl: string, options: PollTransportOptions): AsyncGenerator<TransportEvent> {
  return latestTransport(latestUrl, new PollSession(options), options.format, options);
}

/**
 * Long-polls `GET {stream}/latest` over `fetch`: the I/O around `LongPollSession`. The server
 * answers when the next element exists (200) or the wait ends (304, asked again at once).
 * Throws `SubscriptionError` on a refusal (4xx).
 */
export function longPollTransport(latestUrl: string, options: LongPollTransportOptions): AsyncGenerator<TransportEvent> {
  return latestTransport(latestUrl, new LongPollSession(options), options.format, options);
}

async function* latestTransport(latestUrl: string, session: LatestSession, format: PollSessionOptions['format'], options: FetchOptions): AsyncGenerator<TransportEvent> {
  const { signal, fetch: fetchImpl = fetch } = options;
  while (!signal?.aborted) {
    let waitMs: number;
    try {
      const text = await ask(latestUrl, session, fetchImpl, signal);
      if (text !== undefined) yield { type: 'element', text, format, receivedAt: Date.now() };
      waitMs = session.nextDelay(Date.now());
    } catch (error) {
      if (signal?.aborted) return;
      if ((error as Error).name === 'SubscriptionError') throw error;
      waitMs = session.failed(error instanceof RetryableHttpError ? error.retryAfterMs : undefined);
      const { description, ...networkError } = networkFailure(error);
      yield { type: 'reconnect', reason: description, delayMs: waitMs, ...networkError };
    }
    if (waitMs > 0 && !(await delay(waitMs, signal))) return;
    // The fixed strategy's browser-like cache: no request while the cached answer is fresh.
    while (session.fresh) {
      if (!(await delay(session.nextDelay(Date.now()), signal))) return;
    }
  }
}

/**
 * One request of `/latest` and what its answer means: the new element's text, or `undefined`
 * when nothing is new. Throws `SubscriptionError` on a refusal and `RetryableHttpError` on a
 * status worth retrying. A function of its own so that the `Response` (headers, body stream) is
 * not kept while the transport waits for the next request: a suspended generator keeps its
 * locals, and a fleet of pollers (the benchmark's, the reliability scenarios') would each keep
 * their last answer for as long as its cached copy stays fresh, for the garbage collector to
 * copy and promote.
 */
async function ask(latestUrl: string, session: LatestSession, fetchImpl: typeof fetch, signal: AbortSignal | undefined): Promise<string | undefined> {
  const response = await fetchImpl(latestUrl, { headers: session.requesting(), signal: signal ?? null });
  const answer = session.answered(response.status, Object.fromEntries(response.headers));
  if (answer.kind === 'refused') throw await refusal(response, latestUrl);
  if (answer.kind === 'retry') {
    await response.body?.cancel();
    throw new RetryableHttpError(response.status, answer.retryAfterMs);
  }
  if (answer.kind === 'element') return await response.text();
  await response.body?.cancel();
  return undefined;
}
