import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { EVENT_STREAM_MEDIA_TYPE, type FormatName, parseGapEventData, sseEvents } from '@rdf-stream/protocol';
import { parseElementId } from '../element-id.js';
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
        headers: { accept: EVENT_STREAM_MEDIA_TYPE, ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }) },
        signal: connection.signal,
      });
      if (!response.ok) {
        const failure = await httpFailure(response, url.href);
        if (failure instanceof SubscriptionError) throw failure;
        waitMs = failure.retryAfterMs;
        reason = failure.message;
      } else if (!(response.headers.get('content-type') ?? '').toLowerCase().startsWith(EVENT_STREAM_MEDIA_TYPE) || response.body === null) {
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
            if (event.event === sseEvents.gap) {
              const gap = parseGap(event.data);
              yield { type: 'gap', afterSeq: gap.requestedId, resumedAtSeq: gap.oldestRetained, reason: gap.reason };
            } else if (event.event === undefined || event.event === 'message') {
              attempt = 0;
              stats.elements++;
              yield { type: 'element', text: event.data, format, receivedAt, ...(event.id === undefined ? {} : { id: event.id }) };
            } else if (event.event === sseEvents.shed) {
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

/** The sequence numbers of the publisher's `gap` payload (`@rdf-stream/protocol`), whose ids are `{epoch}-{seq}`. */
function parseGap(data: string): { requestedId: number | undefined; oldestRetained: number | undefined; reason: GapEvent['reason'] } {
  const gap = parseGapEventData(data);
  const seqOf = (id: string | undefined) => (id === undefined ? undefined : parseElementId(id)?.seq);
  // An id of another life of the log numbers nothing of this one.
  return { requestedId: gap.reason === 'epoch' ? undefined : seqOf(gap.requestedId), oldestRetained: seqOf(gap.oldestRetained), reason: gap.reason };
}
