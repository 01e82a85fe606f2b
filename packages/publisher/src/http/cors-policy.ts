import type { FastifyCorsOptions, FastifyCorsOptionsDelegateCallback } from '@fastify/cors';
import { exposedHeaders } from '@rdf-stream/protocol';
import type { FastifyRequest } from 'fastify';


/** Request headers a reader's script may send (a preflight asking for others is not granted them). */
const readHeaders = ['Accept', 'Last-Event-ID', 'If-None-Match', 'If-Modified-Since', 'Prefer', 'Cache-Control', 'Content-Type'];
/** Request headers an ingesting script may send. */
const ingestHeaders = ['Authorization', 'Content-Type', 'Content-Encoding', 'Idempotency-Key'];

/** Seconds a browser may cache a preflight's answer. */
const READ_PREFLIGHT_MAX_AGE_SECONDS = 86_400;
const INGEST_PREFLIGHT_MAX_AGE_SECONDS = 600;

/** The origins of `corsIngestOrigins` (comma-separated; `*` for any; empty for none). */
export function ingestOrigins(setting: string): '*' | string[] {
  const origins = setting
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
  return origins.includes('*') ? '*' : origins;
}

const streamPath = /^\/streams\/[^/?#]+\/?(?:[?#]|$)/;

/** Ingest (a POST to a stream, or its preflight) and `/metrics`: the resources closed to other origins by default. */
function isRestricted(request: FastifyRequest): boolean {
  const url = request.url;
  if (url === '/metrics' || url.startsWith('/metrics?')) return true;
  if (!streamPath.test(url)) return false;
  const method = request.method === 'OPTIONS' ? request.headers['access-control-request-method'] : request.method;
  return typeof method === 'string' && method.toUpperCase() === 'POST';
}

/**
 * The CORS policy, per request (`@fastify/cors`'s delegator): every read is open to scripts of
 * any origin (with a fixed list of request headers, never whatever a preflight asks for); ingest
 * and `/metrics` only to the origins of `corsIngestOrigins`, none by default, since a page
 * holding an ingest token should not be able to use it from an origin the operator did not name.
 */
export function corsPolicy(corsIngestOrigins: string): FastifyCorsOptionsDelegateCallback {
  const optionsFor = corsOptions(corsIngestOrigins);
  return (request, callback) => callback(null, optionsFor(request));
}

/**
 * Whether a browser script of the request's `Origin` may use it under the CORS policy. A
 * WebSocket handshake is not subject to CORS (a browser opens it from any origin and lets the
 * script read everything): the data WebSocket applies the same policy itself before upgrading,
 * and answers 403 `PUB_ERR_ORIGIN_NOT_ALLOWED` to an origin the policy refuses. A request
 * without `Origin` is not a browser's script: allowed.
 */
export function originAllowed(corsIngestOrigins: string): (request: FastifyRequest) => boolean {
  const optionsFor = corsOptions(corsIngestOrigins);
  return (request) => {
    const origin = request.headers.origin;
    if (origin === undefined) return true;
    const allowed = optionsFor(request).origin;
    if (allowed === '*' || allowed === true) return true;
    if (typeof allowed === 'string') return allowed === origin;
    return Array.isArray(allowed) && allowed.includes(origin);
  };
}

/** The CORS options of each request: reads open to every origin, ingest and `/metrics` to `corsIngestOrigins`. */
function corsOptions(corsIngestOrigins: string): (request: FastifyRequest) => FastifyCorsOptions {
  const read: FastifyCorsOptions = {
    origin: '*',
    // DELETE: a Solid app unsubscribes from a notification channel (its id is its only secret).
    methods: ['GET', 'HEAD', 'POST', 'DELETE'],
    allowedHeaders: readHeaders,
    exposedHeaders: [...exposedHeaders],
    maxAge: READ_PREFLIGHT_MAX_AGE_SECONDS,
  };
  const origins = ingestOrigins(corsIngestOrigins);
  const restricted: FastifyCorsOptions = {
    origin: origins === '*' ? '*' : origins.length === 0 ? false : origins,
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: ingestHeaders,
    exposedHeaders: [...exposedHeaders],
    maxAge: INGEST_PREFLIGHT_MAX_AGE_SECONDS,
  };
  return (request) => (isRestricted(request) ? restricted : read);
}
