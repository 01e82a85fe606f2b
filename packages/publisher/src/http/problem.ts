import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorCode, echoed, errorCatalogue, MAX_DETAIL_CHARS, PublisherError, problemType } from '../errors.js';

export const PROBLEM_JSON = 'application/problem+json';

/**
 * The RFC 9457 problem object for `error`. `instance` (the request's URL, as the client sent
 * it) is echoed bounded; so is a `detail` of more than `MAX_DETAIL_CHARS`, whose client strings
 * should each have been `echoed` already.
 */
export function problemBody(error: PublisherError, instance?: string): Record<string, unknown> {
  return {
    type: problemType(error.code),
    title: errorCatalogue[error.code].title,
    status: error.status,
    code: error.code,
    ...(error.detail === undefined ? {} : { detail: echoed(error.detail, MAX_DETAIL_CHARS) }),
    ...(instance === undefined ? {} : { instance: echoed(instance) }),
    ...error.extensions,
  };
}

/** Sends an RFC 9457 problem object for `error`. */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: PublisherError): FastifyReply {
  const body = problemBody(error, request.url);
  return reply
    .code(error.status)
    .headers({ ...error.headers, 'content-type': PROBLEM_JSON, 'cache-control': 'no-store' })
    .send(JSON.stringify(body));
}

/** Fastify's own 4xx answers that have a code of their own (the others are PUB_ERR_BAD_REQUEST). */
const frameworkCodes: Readonly<Partial<Record<number, ErrorCode>>> = {
  405: 'PUB_ERR_METHOD_NOT_ALLOWED',
  413: 'PUB_ERR_BODY_TOO_LARGE',
  415: 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE',
};

/** Maps whatever was thrown to a catalogued error; unknown errors become a bare 500. */
export function toPublisherError(error: FastifyError | Error, retryAfterSeconds: number): PublisherError {
  if (error instanceof PublisherError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.code === 'FST_UNDER_PRESSURE') {
    return new PublisherError('PUB_ERR_OVERLOADED', 'Try again later.', {}, { 'retry-after': String(retryAfterSeconds) });
  }
  const status = fastifyError.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const code = frameworkCodes[status] ?? 'PUB_ERR_BAD_REQUEST';
    // Fastify's own 4xx messages describe the request, never the server's internals; some quote it.
    return new PublisherError(code, echoed(fastifyError.message));
  }
  return new PublisherError('PUB_ERR_INTERNAL');
}

/** Every error and unknown route leaves as problem+json; 5xx details stay in the log. */
export function registerProblemHandlers(app: FastifyInstance, retryAfterSeconds: number): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const problem = toPublisherError(error, retryAfterSeconds);
    if (problem.status >= 500 && problem.code === 'PUB_ERR_INTERNAL') request.log.error({ err: error }, 'request failed');
    return sendProblem(request, reply, problem);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, new PublisherError('PUB_ERR_ROUTE_NOT_FOUND', `No resource at ${echoed(request.url)}`)),
  );
}

/** Fastify's `frameworkErrors` (e.g. a URL that cannot be decoded): problem+json too. */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  sendProblem(request, reply, new PublisherError('PUB_ERR_BAD_REQUEST', echoed(error.message)));
}

/**
 * Node's `clientError` (bytes the HTTP parser refuses: control characters in headers, oversized
 * headers; a request not received within `headersTimeoutMs` / `requestTimeoutMs`): answered on
 * the raw socket, as problem+json, then the connection is closed.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const { status, reason, problem } = clientProblem(error.code);
  const body = JSON.stringify({ ...problemBody(problem), status });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: ${PROBLEM_JSON}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function clientProblem(code: string | undefined): { status: number; reason: string; problem: PublisherError } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, reason: 'Request Header Fields Too Large', problem: new PublisherError('PUB_ERR_BAD_REQUEST', 'Request headers too large') };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        reason: 'Request Timeout',
        problem: new PublisherError('PUB_ERR_REQUEST_TIMEOUT', 'The request headers or body did not arrive within the time allowed (headersTimeoutMs, requestTimeoutMs)'),
      };
    default:
      return { status: 400, reason: 'Bad Request', problem: new PublisherError('PUB_ERR_BAD_REQUEST', 'Malformed HTTP request') };
  }
}
