import type { FastifyReply } from 'fastify';
import type { PublisherConfig } from '../config/config-schema.js';
import { sseFrame } from '../render/sse-frame.js';

/** SSE headers plus those other hooks (CORS) set on the reply before it was hijacked. */
export function streamHeaders(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) headers[name] = String(value);
  }
  return {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  };
}

/**
 * The last frame of every event stream at shutdown: come back after `sseRetryMs` plus a random
 * delay up to `shutdownRetryJitterMs`, so that reconnections spread out. One per stream (the
 * jitter differs), for SSE subscribers and notification receivers alike.
 */
export const shutdownFarewell = (config: Pick<PublisherConfig, 'sseRetryMs' | 'shutdownRetryJitterMs'>) => () =>
  sseFrame({ comment: 'shutting down', retry: config.sseRetryMs + Math.round(Math.random() * config.shutdownRetryJitterMs) });
