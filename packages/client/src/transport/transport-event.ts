import type { FormatName, GapReason } from '@rdf-stream/protocol';

/** What a transport hands over: an element's bytes as received, before decoding. */
export interface RawElement {
  readonly type: 'element';
  readonly text: string;
  readonly format: FormatName;
  /** Client clock (ms since the epoch) when the element's last byte arrived. */
  readonly receivedAt: number;
  /** The element's id (`{epoch}-{seq}`: SSE's `id:`, the WebSocket's `element` line), when the transport has one. */
  readonly id?: string;
}

/** Elements were lost: a sequence jump, or the server said so (SSE `gap` event, WebSocket `gap` message, `Stream-Gap`). */
export interface GapEvent {
  readonly type: 'gap';
  /** The last sequence number received before the gap, if known. */
  readonly afterSeq: number | undefined;
  /** The next sequence number delivered after the gap, if known. */
  readonly resumedAtSeq: number | undefined;
  /**
   * `expired`: older than the log retains; `unknown`: newer than the log; `epoch`: the id is from
   * another life of the stream's log (its data was lost or replaced); `sequence-jump`: seen here.
   */
  readonly reason: GapReason | 'sequence-jump';
}

/** The transport lost its connection or got an error, and will try again after `delayMs`. */
export interface ReconnectEvent {
  readonly type: 'reconnect';
  readonly reason: string;
  readonly delayMs: number;
  /**
   * The system error code when no HTTP answer came (`ECONNREFUSED`, `ENOTFOUND`…, see
   * `networkErrorCode`); absent for an HTTP failure (a 503) or where fetch gives no code (browsers).
   */
  readonly networkError?: string;
}

export type TransportEvent = RawElement | GapEvent | ReconnectEvent;

export type TransportName = 'sse' | 'websocket' | 'poll' | 'long-poll';
