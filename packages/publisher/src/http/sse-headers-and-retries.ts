import type { FastifyReply } from 'fastify';
import { EVENT_STREAM_MEDIA_TYPE, sseEvents } from '@rdf-stream/protocol';
import type { PublisherConfig } from '../config/config-schema.js';
import type { SseEncoding } from '../render/event-stream-encoder.js';
import { sseFrame } from '../render/sse-frame.js';

/** The headers of every event stream. */
export const eventStreamHeaders = Object.freeze({
  'content-type': `${EVENT_STREAM_MEDIA_TYPE}; charset=utf-8`,
  'cache-control': 'no-store',
  'x-accel-buffering': 'no',
});

/**
 * SSE headers plus those other hooks (CORS) set on the reply before it was hijacked; with
 * `encoding` (the events route negotiates it), `Content-Encoding` and `Vary: Accept-Encoding`.
 */
export function streamHeaders(reply: FastifyReply, encoding?: SseEncoding): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) headers[name] = String(value);
  }
  Object.assign(headers, eventStreamHeaders);
  if (encoding !== undefined) {
    headers.vary = headers.vary === undefined ? 'Accept-Encoding' : `${headers.vary}, Accept-Encoding`;
    if (encoding === 'gzip') headers['content-encoding'] = 'gzip';
  }
  return headers;
}

/**
 * The delay a shed subscriber is told to come back after (SSE's `retry:`, the WebSocket's close
 * 1013): uniform between `sseRetryMs` and `maxDelayMs` (just
 * `sseRetryMs` when that is not below `maxDelayMs`), so that a shed crowd comes back spread over
 * the whole window rather than a share of it at its first moment. `random` is uniform in [0, 1).
 */
export function shedRetryMs(sseRetryMs: number, maxDelayMs: number, random: () => number = Math.random): number {
  return sseRetryMs + Math.round(random() * Math.max(0, maxDelayMs - sseRetryMs));
}

/**
 * An EventSource that cannot be taken now: it would give up for good on anything but a 200, so
 * it gets a whole 200 stream saying when to come back (`retry:`, jittered between `sseRetryMs`
 * and `maxDelayMs` so that the crowd spreads out: `shedRetryMs`) and why (a `shed` event).
 */
export function shedStream(code: 'PUB_ERR_OVERLOADED' | 'PUB_ERR_SHUTTING_DOWN', sseRetryMs: number, maxDelayMs: number, random: () => number = Math.random) {
  const retryMs = shedRetryMs(sseRetryMs, maxDelayMs, random);
  return {
    retryAfter: String(Math.ceil(retryMs / 1000)),
    body: sseFrame({ retry: retryMs, event: sseEvents.shed, data: JSON.stringify({ code, retryMs }) }),
  };
}

/**
 * The delay after which a subscriber should come back at shutdown: `sseRetryMs` plus a random
 * delay up to `shutdownRetryJitterMs`, drawn anew at each call. SSE sends it as `retry:`, the
 * data WebSocket as the close reason `{"retryMs":N}`.
 */
export const shutdownRetryMs = (config: Pick<PublisherConfig, 'sseRetryMs' | 'shutdownRetryJitterMs'>) => () =>
  config.sseRetryMs + Math.round(Math.random() * config.shutdownRetryJitterMs);
