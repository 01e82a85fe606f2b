/**
 * The catalogue of errors the publisher answers with, as RFC 9457 problem details. Codes are
 * stable: clients may switch on them. `docs/errors.md` explains each and how to fix it.
 */
export const errorCatalogue = Object.freeze({
  PUB_ERR_STREAM_NOT_FOUND: { status: 404, title: 'Stream not found' },
  PUB_ERR_ELEMENT_NOT_FOUND: { status: 404, title: 'No such element' },
  PUB_ERR_ELEMENT_GONE: { status: 410, title: 'Element no longer retained' },
  PUB_ERR_PAGE_NOT_FOUND: { status: 404, title: 'No such history page' },
  PUB_ERR_RESOURCE_NOT_FOUND: { status: 404, title: 'No such sensor or feature of interest in the stream' },
  PUB_ERR_PAGE_GONE: { status: 410, title: 'History page no longer retained' },
  PUB_ERR_PAGE_NOT_BUILT: { status: 503, title: 'The live page is not built' },
  PUB_ERR_LOG_UNAVAILABLE: { status: 503, title: "The stream's log cannot be written at the moment" },
  PUB_ERR_ROUTE_NOT_FOUND: { status: 404, title: 'Not found' },
  PUB_ERR_NO_ELEMENT_YET: { status: 503, title: 'The stream has not published any element yet' },
  PUB_ERR_NOT_ACCEPTABLE: { status: 406, title: 'None of the offered formats is acceptable' },
  PUB_ERR_UNKNOWN_FORMAT: { status: 400, title: 'Unknown format' },
  PUB_ERR_INVALID_EVENT_ID: { status: 400, title: 'Invalid Last-Event-ID' },
  PUB_ERR_BAD_REQUEST: { status: 400, title: 'Bad request' },
  PUB_ERR_REQUEST_TIMEOUT: { status: 408, title: 'The request was not received in time' },
  PUB_ERR_METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  PUB_ERR_LONG_POLL_LIMIT: { status: 503, title: 'Too many long-poll requests are waiting' },
  PUB_ERR_OVERLOADED: { status: 503, title: 'The publisher is overloaded' },
  PUB_ERR_SHUTTING_DOWN: { status: 503, title: 'The publisher is shutting down' },
  PUB_ERR_UNAUTHORIZED: { status: 401, title: 'A valid bearer token is required' },
  PUB_ERR_FORBIDDEN: { status: 403, title: 'The token does not grant access to this stream' },
  PUB_ERR_ORIGIN_NOT_ALLOWED: { status: 403, title: "The request's Origin is not allowed by the CORS policy" },
  PUB_ERR_UPGRADE_REQUIRED: { status: 426, title: 'This endpoint is a WebSocket: send an Upgrade request' },
  PUB_ERR_UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported Content-Type or Content-Encoding' },
  PUB_ERR_BODY_TOO_LARGE: { status: 413, title: 'The request body is too large' },
  PUB_ERR_ELEMENT_TOO_LARGE: { status: 413, title: 'The element exceeds a count limit' },
  PUB_ERR_RDF_SYNTAX: { status: 400, title: 'The body is not valid RDF in its Content-Type' },
  PUB_ERR_JSON_TOO_DEEP: { status: 400, title: 'The JSON-LD body is nested too deeply' },
  PUB_ERR_REMOTE_CONTEXT: { status: 400, title: 'Remote JSON-LD contexts are not fetched' },
  PUB_ERR_FORBIDDEN_KEY: { status: 400, title: 'The body holds a forbidden JSON key' },
  PUB_ERR_EMPTY_ELEMENT: { status: 422, title: 'The element holds no triples' },
  PUB_ERR_SHAPE_VIOLATION: { status: 422, title: "The element does not satisfy the stream's SHACL shapes" },
  PUB_ERR_INVALID_IDEMPOTENCY_KEY: { status: 400, title: 'Invalid Idempotency-Key' },
  PUB_ERR_IDEMPOTENCY_KEY_REUSED: { status: 422, title: 'The Idempotency-Key was used for a different request' },
  PUB_ERR_IDEMPOTENCY_KEY_IN_USE: { status: 409, title: 'A request with this Idempotency-Key is in progress' },
  PUB_ERR_NOTIFICATION_BAD_REQUEST: { status: 400, title: 'The subscription request is not a JSON-LD object' },
  PUB_ERR_NOTIFICATION_INVALID: { status: 422, title: 'The subscription request has an invalid or unsupported member' },
  PUB_ERR_NOTIFICATION_UNSUPPORTED_TYPE: { status: 422, title: 'Unsupported notification channel type' },
  PUB_ERR_NOTIFICATION_UNKNOWN_TOPIC: { status: 422, title: 'The topic is not a stream of this publisher' },
  PUB_ERR_NOTIFICATION_CHANNELS_FULL: { status: 503, title: 'Too many notification channels are open' },
  PUB_ERR_NOTIFICATION_CHANNEL_NOT_FOUND: { status: 404, title: 'No such notification channel' },
  PUB_ERR_NOTIFICATION_STORE_UNAVAILABLE: { status: 503, title: 'The notification channels cannot be read or stored at the moment' },
  PUB_ERR_SPARQL_BAD_REQUEST: { status: 400, title: 'Not a SPARQL 1.1 Protocol query request' },
  PUB_ERR_SPARQL_SYNTAX: { status: 400, title: 'The query is not valid SPARQL 1.1' },
  PUB_ERR_SPARQL_UPDATE_REFUSED: { status: 403, title: 'SPARQL Update is not accepted: the endpoint is read-only' },
  PUB_ERR_SPARQL_WINDOW_TOO_LARGE: { status: 400, title: 'The window holds more elements than a query may range over' },
  PUB_ERR_SPARQL_QUERY_TOO_LARGE: { status: 413, title: 'The query is longer than the endpoint accepts' },
  PUB_ERR_SPARQL_TOO_MANY_RESULTS: { status: 422, title: 'The result holds more rows or triples than the endpoint returns' },
  PUB_ERR_SPARQL_UNSUPPORTED: { status: 422, title: 'The query uses a feature the endpoint cannot evaluate' },
  PUB_ERR_SPARQL_TIMEOUT: { status: 503, title: 'The query ran longer than the time limit' },
  PUB_ERR_SPARQL_BUSY: { status: 503, title: 'Too many SPARQL queries are waiting' },
  PUB_ERR_INTERNAL: { status: 500, title: 'Internal error' },
} as const);

export type ErrorCode = keyof typeof errorCatalogue;

/** An error meant for the client: rendered as problem+json with its code, never with a stack. */
export class PublisherError extends Error {
  override readonly name = 'PublisherError';
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    /** Human-readable, specific to this occurrence; must not leak internals. */
    readonly detail?: string,
    /** Extra members of the problem object (RFC 9457 §3.2) and headers to send. */
    readonly extensions: Readonly<Record<string, unknown>> = {},
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail ?? errorCatalogue[code].title);
    this.status = errorCatalogue[code].status;
  }
}

/**
 * Characters of one client-supplied string (a URL, a header, a token of the body) that an error
 * body echoes; the rest is cut, and the cut marked with `TRUNCATION_MARK`.
 */
export const MAX_ECHOED_CHARS = 256;

/** A `detail`: its own words and a few echoes. A longer one (a library's message) is cut too. */
export const MAX_DETAIL_CHARS = 4 * MAX_ECHOED_CHARS;

/** Ends a cut echo. Only URI characters, so that a cut `instance` is still a URI reference. */
export const TRUNCATION_MARK = '...(truncated)';

/**
 * `text` as an error may echo it: whole up to `maxChars`, else its first `maxChars` characters
 * and `TRUNCATION_MARK`, never cutting a surrogate pair or a `%XX` escape in two.
 */
export function echoed(text: string, maxChars = MAX_ECHOED_CHARS): string {
  if (text.length <= maxChars) return text;
  let end = maxChars;
  const lastUnit = text.charCodeAt(end - 1);
  if (lastUnit >= 0xd800 && lastUnit <= 0xdbff) end--;
  const percent = text.lastIndexOf('%', end - 1);
  if (percent !== -1 && percent >= end - 2) end = percent;
  return `${text.slice(0, end)}${TRUNCATION_MARK}`;
}

/** The problem `type` of a code: a stable URN, documented in `docs/errors.md`. */
export const problemType = (code: ErrorCode) => `urn:rdf-stream:error:${code}`;
