import { parseElementId } from '../element-id.js';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { FormatName } from '../formats.js';
import { type BackoffOptions, backoffDelay, delay } from './backoff.js';
import { httpFailure, SubscriptionError } from './subscription-error.js';
import type { GapEvent, TransportEvent } from './transport-event.js';
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
 * `Retry-After`, and run the same in Node and browsers), parsed by eventsource-parser.
 * Reconnects for ever with jittered exponential backoff, never sooner than the server's
 * `retry:`, resuming from the last id; throws `SubscriptionError` on a refusal (4xx).
 */
export async function* sseTransport(eventsUrl: string, options: SseTransportOptions): AsyncGenerator<TransportEvent> {
  const { format, backoff, maxEventBytes, stats, signal, fetch: fetchImpl = fetch } = options;
  let lastEventId = options.lastEventId;
  let serverRetryMs = 0;
  let attempt = 0;
  const url = new URL(eventsUrl);
  url.searchParams.set('format', format);

  while (!signal?.aborted) {
    const connection = new AbortController();
    const onAbort = () => connection.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    let reason: string;
    let waitMs: number | undefined;
    try {
      stats.requests++;
      const response = await fetchImpl(url, {
        headers: { accept: 'text/event-stream', ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }) },
        signal: connection.signal,
      });
      if (!response.ok) {
        const failure = await httpFailure(response, url.href);
        if (failure instanceof SubscriptionError) throw failure;
        waitMs = failure.retryAfterMs;
        reason = failure.message;
      } else if (!/^text\/event-stream/i.test(response.headers.get('content-type') ?? '') || response.body === null) {
        await response.body?.cancel();
        reason = `not an event stream (${response.headers.get('content-type') ?? 'no content type'})`;
      } else {
        const queue: EventSourceMessage[] = [];
        let pendingBytes = 0;
        const parser = createParser({
          onEvent: (event) => {
            pendingBytes = 0;
            queue.push(event);
          },
          onRetry: (retry) => {
            serverRetryMs = retry;
          },
        });
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        reason = 'stream ended';
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          pendingBytes += value.length;
          if (pendingBytes > maxEventBytes) {
            reason = `event larger than ${maxEventBytes} bytes`;
            connection.abort();
            break;
          }
          parser.feed(value);
          const receivedAt = Date.now();
          for (const event of queue.splice(0)) {
            if (event.id !== undefined) lastEventId = event.id;
            if (event.event === 'gap') {
              const gap = parseGap(event.data);
              yield { type: 'gap', afterSeq: gap.requestedId, resumedAtSeq: gap.oldestRetained, reason: gap.reason };
            } else if (event.event === undefined || event.event === 'message') {
              attempt = 0;
              stats.elements++;
              yield { type: 'element', text: event.data, format, receivedAt, ...(event.id === undefined ? {} : { id: event.id }) };
            } else if (event.event === 'shed') {
              reason = 'shed by the server';
            }
          }
        }
      }
    } catch (error) {
      if (signal?.aborted) return;
      if ((error as Error).name === 'SubscriptionError') throw error;
      reason = (error as Error).message;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    if (signal?.aborted) return;
    const delayMs = waitMs ?? backoffDelay(attempt++, backoff, serverRetryMs);
    stats.reconnects++;
    yield { type: 'reconnect', reason, delayMs };
    if (!(await delay(delayMs, signal))) return;
  }
}

/** The publisher's `gap` payload: `{requestedId, oldestRetained, reason}`, ids as `{epoch}-{seq}`. */
function parseGap(data: string): { requestedId: number | undefined; oldestRetained: number | undefined; reason: GapEvent['reason'] } {
  const seqOf = (value: unknown) => (typeof value === 'string' ? parseElementId(value)?.seq : undefined);
  try {
    const parsed = JSON.parse(data) as { requestedId?: unknown; oldestRetained?: unknown; reason?: unknown };
    // An id of another life of the log numbers nothing of this one.
    return {
      requestedId: parsed.reason === 'epoch' ? undefined : seqOf(parsed.requestedId),
      oldestRetained: seqOf(parsed.oldestRetained),
      reason: parsed.reason === 'expired' || parsed.reason === 'epoch' ? parsed.reason : 'unknown',
    };
  } catch {
    return { requestedId: undefined, oldestRetained: undefined, reason: 'unknown' };
  }
}
