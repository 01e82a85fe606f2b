import { delay } from './backoff.js';
import { LongPollSession, type LongPollSessionOptions } from './long-poll-session.js';
import { RetryableHttpError, refusal } from './subscription-error.js';
import type { TransportEvent } from './transport-event.js';

export interface LongPollTransportOptions extends LongPollSessionOptions {
  readonly signal?: AbortSignal;
  readonly fetch?: typeof fetch;
}

/**
 * Long-polls `GET {stream}/latest` over `fetch`: the I/O around `LongPollSession`. The server
 * answers when the next element exists (200) or the wait ends (304, asked again at once).
 * Throws `SubscriptionError` on a refusal (4xx).
 */
export async function* longPollTransport(latestUrl: string, options: LongPollTransportOptions): AsyncGenerator<TransportEvent> {
  const { format, signal, fetch: fetchImpl = fetch } = options;
  const session = new LongPollSession(options);
  while (!signal?.aborted) {
    try {
      const response = await fetchImpl(latestUrl, { headers: session.requesting(), signal: signal ?? null });
      const answer = session.answered(response.status, Object.fromEntries(response.headers));
      if (answer.kind === 'refused') throw await refusal(response, latestUrl);
      if (answer.kind === 'retry') {
        await response.body?.cancel();
        throw new RetryableHttpError(response.status, answer.retryAfterMs);
      }
      if (answer.kind === 'element') yield { type: 'element', text: await response.text(), format, receivedAt: Date.now() };
      else await response.body?.cancel();
    } catch (error) {
      if (signal?.aborted) return;
      if ((error as Error).name === 'SubscriptionError') throw error;
      const waitMs = session.failed(error instanceof RetryableHttpError ? error.retryAfterMs : undefined);
      yield { type: 'reconnect', reason: (error as Error).message, delayMs: waitMs };
      if (!(await delay(waitMs, signal))) return;
    }
  }
}
