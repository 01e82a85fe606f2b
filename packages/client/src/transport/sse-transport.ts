import type { FormatName } from '@rdf-stream/protocol';
import type { BackoffOptions } from './backoff.js';
import { delay } from './backoff.js';
import { networkFailure } from './network-error.js';
import { SseSession } from './sse-session.js';
import { refusal } from './subscription-error.js';
import type { TransportEvent } from './transport-event.js';
import type { TransportStats } from './transport-stats.js';

export interface SseTransportOptions {
  readonly format: FormatName;
  /** Resume after this id (sent as `Last-Event-ID`). */
  readonly lastEventId?: string;
  readonly backoff: BackoffOptions;
  /** Largest event accepted, in bytes; a larger one (or garbage without event ends) drops the connection. */
  readonly maxEventBytes: number;
  readonly stats: TransportStats;
  readonly signal?: AbortSignal;
  readonly fetch?: typeof fetch;
}

/**
 * Server-Sent Events over `fetch` (so that it can send `Last-Event-ID`, read status codes and
 * `Retry-After`, and run the same in Node and browsers): the I/O around `SseSession`, which
 * parses the stream (eventsource-parser) and decides when to reconnect. Reconnects for ever
 * with jittered exponential backoff, never sooner than the server's `retry:`, resuming from the
 * last id; throws `SubscriptionError` on a refusal (4xx). Ending the iteration (`break`,
 * `return()`) closes the connection and leaves no timer behind.
 */
export async function* sseTransport(eventsUrl: string, options: SseTransportOptions): AsyncGenerator<TransportEvent> {
  const { signal, fetch: fetchImpl = fetch } = options;
  const queue: TransportEvent[] = [];
  const session = new SseSession(options, (event) => queue.push(event));
  const url = new URL(eventsUrl);
  url.searchParams.set('format', options.format);

  while (!signal?.aborted) {
    const connection = new AbortController();
    const onAbort = () => connection.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    let failure: string | undefined;
    let networkError: { readonly networkError?: string } = {};
    try {
      const response = await fetchImpl(url, { headers: session.connecting(), signal: connection.signal });
      const answer = session.answered(response.status, response.headers.get('content-type') ?? undefined, response.headers.get('retry-after') ?? undefined);
      if (answer.kind === 'refused') throw await refusal(response, url.href);
      if (answer.kind === 'retry' || response.body === null) {
        await response.body?.cancel();
      } else {
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const open = session.received(value, Date.now());
          yield* queue.splice(0);
          if (!open) {
            connection.abort();
            break;
          }
        }
      }
    } catch (error) {
      if (signal?.aborted) return;
      if ((error as Error).name === 'SubscriptionError') throw error;
      ({ description: failure, ...networkError } = networkFailure(error));
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // Also when the consumer stops reading (`break`, `return()`) while the stream is open: an
      // unread response keeps its socket, and the process, alive.
      connection.abort();
    }
    if (signal?.aborted) return;
    const delayMs = session.reconnect(failure);
    yield { type: 'reconnect', reason: session.reason, delayMs, ...networkError };
    if (!(await delay(delayMs, signal))) return;
  }
}
