import { delay } from './backoff.js';
import { PollSession, type PollSessionOptions } from './poll-session.js';
import { RetryableHttpError, refusal } from './subscription-error.js';
import type { TransportEvent } from './transport-event.js';

export type { PollStrategy } from './poll-session.js';

export interface PollTransportOptions extends PollSessionOptions {
  readonly signal?: AbortSignal;
  readonly fetch?: typeof fetch;
}

/**
 * Polls `GET {stream}/latest` over `fetch`: the I/O around `PollSession` (a client-side HTTP
 * cache, each element handed over once, the wait before each request). Throws
 * `SubscriptionError` on a refusal (4xx).
 */
export async function* pollTransport(latestUrl: string, options: PollTransportOptions): AsyncGenerator<TransportEvent> {
  const { format, signal, fetch: fetchImpl = fetch } = options;
  const session = new PollSession(latestUrl, options);
  while (!signal?.aborted) {
    let waitMs: number;
    try {
      const response = await fetchImpl(latestUrl, { headers: session.requesting(), signal: signal ?? null });
      const answer = session.answered(response.status, Object.fromEntries(response.headers));
      if (answer.kind === 'refused') throw await refusal(response, latestUrl);
      if (answer.kind === 'retry') {
        await response.body?.cancel();
        throw new RetryableHttpError(response.status, answer.retryAfterMs);
      }
      if (answer.kind === 'element') {
        const text = await response.text();
        yield { type: 'element', text, format, receivedAt: Date.now() };
      } else {
        await response.body?.cancel();
      }
      waitMs = session.nextDelay(Date.now());
    } catch (error) {
      if (signal?.aborted) return;
      if ((error as Error).name === 'SubscriptionError') throw error;
      waitMs = session.failed(error instanceof RetryableHttpError ? error.retryAfterMs : undefined);
      yield { type: 'reconnect', reason: (error as Error).message, delayMs: waitMs };
    }
    if (!(await delay(waitMs, signal))) return;
    while (session.fresh) {
      if (!(await delay(options.pollIntervalMs, signal))) return;
    }
  }
}
