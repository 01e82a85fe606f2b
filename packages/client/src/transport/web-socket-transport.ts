import { loadWebSocket } from '#open-web-socket';
import { delay } from './backoff.js';
import { networkFailure } from './network-error.js';
import { refusal, SubscriptionError } from './subscription-error.js';
import type { TransportEvent } from './transport-event.js';
import type { OpenWebSocket, WebSocketConnection, WebSocketEnd } from './web-socket-connection.js';
import { WebSocketSession, type WebSocketSessionOptions } from './web-socket-session.js';

export interface WebSocketTransportOptions extends WebSocketSessionOptions {
  readonly signal?: AbortSignal;
  /** Asks a refused upgrade's status where the WebSocket cannot tell it (browsers, Node ≥ 22). */
  readonly fetch?: typeof fetch;
  /** The WebSocket implementation; by default the platform's (`#open-web-socket`). */
  readonly openWebSocket?: OpenWebSocket;
}

/**
 * The publisher's data WebSocket (`{stream}/ws`, docs/protocol.md): the I/O around
 * `WebSocketSession`. Reconnects for ever, resuming after the last id with `?lastEventId=`,
 * with jittered exponential backoff or after the `retryMs` of a shutdown (1012) or shed (1013)
 * close; ends when the server says the stream ended (1001 `stream-ended`); throws
 * `SubscriptionError` on a refused upgrade (4xx) or a policy close (1008, 1009). Messages wait
 * in a queue of at most `maxEventBytes` characters: beyond, the socket is paused where the
 * implementation can (`ws`), else closed and resumed once the queue is read. Ending the
 * iteration (`break`, `return()`) closes the socket and leaves no timer behind.
 */
export async function* webSocketTransport(webSocketUrl: string, options: WebSocketTransportOptions): AsyncGenerator<TransportEvent> {
  const { signal, fetch: fetchImpl = fetch } = options;
  const open = options.openWebSocket ?? (await loadWebSocket());
  const queue: TransportEvent[] = [];
  const session = new WebSocketSession(options, (event) => queue.push(event));

  while (!signal?.aborted) {
    const url = session.connecting(webSocketUrl);
    let end: WebSocketEnd | undefined;
    let wake: (() => void) | undefined;
    let queuedChars = 0;
    let paused = false;
    let fellBehind = false;
    const connection: WebSocketConnection = open(url, {
      opened: () => undefined,
      message: (text) => {
        const before = queue.length;
        if (!session.received(text, Date.now())) connection.close();
        // Elements count: a gap's few bytes do not.
        for (const event of queue.slice(before)) if (event.type === 'element') queuedChars += event.text.length;
        if (queuedChars > options.maxEventBytes && !paused && !fellBehind) {
          if (connection.pause === undefined) {
            fellBehind = true;
            connection.close();
          } else {
            paused = true;
            connection.pause();
          }
        }
        wake?.();
      },
      ended: (ended) => {
        end = ended;
        wake?.();
      },
    });
    const onAbort = () => connection.close();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        if (signal?.aborted) return;
        const event = queue.shift();
        if (event !== undefined) {
          if (event.type === 'element') queuedChars -= event.text.length;
          if (paused && queuedChars <= options.maxEventBytes / 2) {
            paused = false;
            connection.resume?.();
          }
          yield event;
        } else if (end !== undefined) {
          break;
        } else {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // Also when the consumer stops reading (`break`, `return()`): an open socket keeps the process alive.
      if (end === undefined) connection.close();
    }
    if (signal?.aborted) return;

    const next = await afterEnd(end, url, session, fellBehind, fetchImpl, signal);
    if (next.kind === 'stop') return;
    const delayMs = session.reconnect(next.failure);
    yield { type: 'reconnect', reason: session.reason, delayMs, ...next.networkError };
    if (!(await delay(delayMs, signal))) return;
  }
}

/** What the end of a connection calls for: stop, or reconnect with what to report. */
type AfterEnd =
  | { readonly kind: 'stop' }
  | { readonly kind: 'reconnect'; readonly failure: string | undefined; readonly networkError: { readonly networkError?: string } };

/**
 * Reads why a connection ended: the stream ended (1001) or the caller aborted: stop; a refusal
 * (an upgrade answered 4xx, a policy close): throws `SubscriptionError`; anything else: reconnect,
 * with the failure to report (a connection that never opened is probed over plain HTTP when the
 * WebSocket cannot tell why).
 */
async function afterEnd(
  end: WebSocketEnd,
  url: string,
  session: WebSocketSession,
  fellBehind: boolean,
  fetchImpl: typeof fetch,
  signal: AbortSignal | undefined,
): Promise<AfterEnd> {
  let failure: string | undefined = fellBehind ? 'the reader fell behind' : undefined;
  let networkError: { readonly networkError?: string } = {};
  if (!end.opened) {
    const answer = end.answer ?? (end.error === undefined || networkFailure(end.error).networkError === undefined ? await probe(url, fetchImpl, signal) : end.error);
    if (signal?.aborted) return { kind: 'stop' };
    if (answer instanceof Response) {
      // 426 to the plain request: the request was right, the upgrade failed on the way.
      if (answer.status >= 400 && answer.status !== UPGRADE_REQUIRED) {
        const verdict = session.answered(answer.status, answer.headers.get('retry-after') ?? undefined);
        if (verdict.kind === 'refused') throw await refusal(answer, httpUrl(url));
      } else {
        failure = `the upgrade failed (HTTP ${answer.status})`;
      }
      await answer.body?.cancel();
    } else {
      ({ description: failure, ...networkError } = networkFailure(answer));
    }
  } else {
    const close = session.closed(end.code, end.reason);
    if (close.kind === 'ended') return { kind: 'stop' };
    if (close.kind === 'refused') {
      throw new SubscriptionError(`${httpUrl(url)} closed the connection ${close.code}${close.reason === '' ? '' : ` ${close.reason}`}`, close.code, { code: close.reason });
    }
  }
  return { kind: 'reconnect', failure, networkError };
}

/** What the publisher answers a plain request for its data WebSocket that would be accepted as an upgrade. */
const UPGRADE_REQUIRED = 426;

/** The http(s) URL of a ws(s) one. */
const httpUrl = (url: string) => url.replace(/^ws/, 'http');

/**
 * Why an upgrade failed where the WebSocket does not tell (browsers and Node's global
 * WebSocket only report a failure): the same URL asked over plain HTTP answers the same refusal
 * (404 unknown stream, 400 bad format or id; the publisher checks them before the upgrade),
 * 426 when it would have been accepted, or fails the same way when the server is unreachable.
 * Resolves with the answer, or with the error of a request that got none.
 */
async function probe(url: string, fetchImpl: typeof fetch, signal: AbortSignal | undefined): Promise<Response | unknown> {
  try {
    return await fetchImpl(httpUrl(url), { signal: signal ?? null });
  } catch (error) {
    return error;
  }
}
