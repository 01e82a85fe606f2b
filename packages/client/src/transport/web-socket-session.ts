import { type FormatName, WS_STREAM_ENDED, webSocketCloseCodes, webSocketMessageTypes } from '@rdf-stream/protocol';
import { type BackoffOptions, backoffDelay } from './backoff.js';
import { serverGap } from './server-gap.js';
import { type FailedAnswer, failedAnswer } from './subscription-error.js';
import type { TransportEvent } from './transport-event.js';
import type { TransportStats } from './transport-stats.js';

export interface WebSocketSessionOptions {
  readonly format: FormatName;
  /** Resume after this id (sent as `?lastEventId=`). */
  readonly lastEventId?: string;
  readonly backoff: BackoffOptions;
  /** Largest message accepted, in UTF-16 code units as SSE's events; a larger one drops the connection. */
  readonly maxEventBytes: number;
  readonly stats: TransportStats;
}

/**
 * What a close means (docs/protocol.md, the data WebSocket's close codes): `reconnect` (after
 * `reconnect()`'s delay, resuming from the last id), `ended` (the stream is over: a replay that
 * finished) or `refused` (the server will not serve this client: do not come back).
 */
export type WebSocketClose =
  | { readonly kind: 'reconnect' }
  | { readonly kind: 'ended' }
  | { readonly kind: 'refused'; readonly code: number; readonly reason: string };

/** 1006: the connection ended without a close frame (a network failure), never sent by a server. */
const ABNORMAL_CLOSURE = 1006;

/**
 * One subscriber's data WebSocket protocol without I/O, as `SseSession` is for SSE: the URL of
 * each connection (`?format=`, `?lastEventId=` of the last element received), the events in
 * each text message (`element {id}\n{document}`, `gap\n{json}`), what a close code means, and
 * how long to wait before connecting again (jittered exponential backoff, or the `retryMs` the
 * server put in a shutdown or shed close). `webSocketTransport` drives it over a WebSocket.
 */
export class WebSocketSession {
  /** The id to resume after (`?lastEventId=`). */
  lastEventId: string | undefined;
  /** Why the current connection ended or will end, for the `reconnect` event. */
  reason = 'connection closed';
  readonly #options: WebSocketSessionOptions;
  readonly #emit: (event: TransportEvent) => void;
  #attempt = 0;
  #retryAfterMs: number | undefined;
  #dropped = false;

  /** `emit` receives every element and gap in the order the server sent them. */
  constructor(options: WebSocketSessionOptions, emit: (event: TransportEvent) => void) {
    this.#options = options;
    this.#emit = emit;
    this.lastEventId = options.lastEventId;
  }

  /** The next connection's URL, from the stream's data WebSocket URL (`…/ws`, http(s) or ws(s)); counts the request. */
  connecting(webSocketUrl: string): string {
    this.#options.stats.requests++;
    this.#dropped = false;
    this.#retryAfterMs = undefined;
    this.reason = 'connection closed';
    const url = new URL(webSocketUrl);
    url.protocol = url.protocol.replace(/^http/, 'ws');
    url.searchParams.set('format', this.#options.format);
    if (this.lastEventId === undefined) url.searchParams.delete('lastEventId');
    else url.searchParams.set('lastEventId', this.lastEventId);
    return url.href;
  }

  /**
   * One data message, as it arrives at `receivedAt` (client clock, ms; null for a binary one):
   * emits the element or gap it holds. False when the connection must be dropped (a message
   * beyond `maxEventBytes`, binary, or of no known type): `reason` says which.
   */
  received(message: string | null, receivedAt: number): boolean {
    if (this.#dropped) return false;
    if (message === null) return this.#drop('binary message');
    if (message.length > this.#options.maxEventBytes) return this.#drop(`message larger than ${this.#options.maxEventBytes} bytes`);
    const lineEnd = message.indexOf('\n');
    const head = lineEnd === -1 ? message : message.slice(0, lineEnd);
    const body = lineEnd === -1 ? '' : message.slice(lineEnd + 1);
    const space = head.indexOf(' ');
    const type = space === -1 ? head : head.slice(0, space);
    const argument = space === -1 ? undefined : head.slice(space + 1);
    if (type === webSocketMessageTypes.element && argument !== undefined && argument !== '') {
      this.lastEventId = argument;
      this.#attempt = 0;
      this.#options.stats.elements++;
      this.#emit({ type: 'element', text: body, format: this.#options.format, receivedAt, id: argument });
      return true;
    }
    if (type === webSocketMessageTypes.gap) {
      this.#emit(serverGap(body));
      return true;
    }
    return this.#drop(`unknown message ${JSON.stringify(head.slice(0, 40))}`);
  }

  /** The upgrade was answered with `status` instead of 101 (read where the platform can): retry, or refused for good. */
  answered(status: number, retryAfter: string | undefined): FailedAnswer {
    const failure = failedAnswer(status, retryAfter);
    if (failure.kind === 'retry') {
      this.#retryAfterMs = failure.retryAfterMs;
      this.reason = failure.reason;
    } else {
      this.reason = `HTTP ${status}`;
    }
    return failure;
  }

  /** The server closed the connection with `code` and `reason` (1006: no close frame came). */
  closed(code: number, reason: string): WebSocketClose {
    if (this.#dropped) return { kind: 'reconnect' };
    const detail = closeReason(reason);
    const codes = webSocketCloseCodes;
    if (code === codes.streamEnded && detail.code === WS_STREAM_ENDED) {
      this.reason = 'stream ended';
      return { kind: 'ended' };
    }
    if (code === codes.clientMessage || code === codes.tooLarge) return { kind: 'refused', code, reason };
    if (code === codes.shutdown || code === codes.overloaded) this.#retryAfterMs = detail.retryMs;
    this.reason =
      code === codes.shutdown
        ? 'the server is restarting'
        : code === codes.overloaded
          ? 'shed by the server'
          : code === codes.evicted
            ? `evicted by the server${detail.reason === undefined ? '' : ` (${detail.reason})`}`
            : code === ABNORMAL_CLOSURE
              ? 'connection lost'
              : `closed ${code}${reason === '' ? '' : ` ${reason}`}`;
    return { kind: 'reconnect' };
  }

  /** The connection ended or failed (`reason`, if not known already): the delay before the next one (ms). */
  reconnect(reason?: string): number {
    if (reason !== undefined && !this.#dropped) this.reason = reason;
    this.#options.stats.reconnects++;
    return this.#retryAfterMs ?? backoffDelay(this.#attempt++, this.#options.backoff);
  }

  #drop(reason: string): false {
    this.reason = reason;
    this.#dropped = true;
    return false;
  }
}

/** A close reason's JSON (`{"retryMs":N}`, `{"code":…}`); empty for a reason in plain text. */
function closeReason(reason: string): { readonly code?: string; readonly reason?: string; readonly retryMs?: number } {
  if (!reason.startsWith('{')) return {};
  try {
    const parsed = JSON.parse(reason) as Record<string, unknown>;
    const retryMs = parsed['retryMs'];
    return {
      ...(typeof parsed['code'] === 'string' ? { code: parsed['code'] } : {}),
      ...(typeof parsed['reason'] === 'string' ? { reason: parsed['reason'] } : {}),
      ...(typeof retryMs === 'number' && Number.isFinite(retryMs) && retryMs >= 0 ? { retryMs } : {}),
    };
  } catch {
    return {};
  }
}
