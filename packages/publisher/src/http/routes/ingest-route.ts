import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CONTEXT_PATH, streamPath } from '@rdf-stream/protocol';
import { PublisherError } from '../../errors.js';
import { IdempotencyKeyTakenError, LogAppendError } from '../../log/event-log.js';
import { elementGraphIri } from '../../model/stream-element.js';
import type { InputFormat } from '../../model/input-formats.js';
import type { StreamHub } from '../../publish/stream-hub.js';
import { type AppContext, hubOf } from '../app-context.js';
import { authorize } from '../ingest/ingest-auth.js';
import { decoderOf, formatOf, readBody, tooLarge } from '../ingest/ingest-body.js';
import { ingestedTriples } from '../ingest/ingested-triples.js';
import { discardRefusedBody } from '../ingest/refused-body.js';
import { type IngestAnswer, ingestAnswer } from '../ingest/idempotency-keys.js';
import type { IngestEndpoint } from '../ingest/ingest-endpoint.js';
import type { IdempotencyStamp } from '../../render/render-element.js';

/** RFC draft-ietf-httpapi-idempotency-key-header: an opaque string; we accept 1–255 visible ASCII characters. */
const idempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/;

/** What the hooks learn of a POST before the handler runs. */
interface IngestRequest {
  readonly hub: StreamHub;
  readonly endpoint: IngestEndpoint;
  readonly format: InputFormat;
  /** The `Idempotency-Key`, once claimed for this request (or already answered). */
  readonly key: string | undefined;
}

const ingestRequests = new WeakMap<FastifyRequest, IngestRequest>();

/**
 * `POST /streams/{id}`: appends one element to an ingest stream, in Fastify's style — every
 * check that needs no body runs in an `onRequest` hook (stream, token, media type, coding,
 * size announced, `Idempotency-Key`), the body is read by this scope's content-type parser
 * (decompressed, within `ingestMaxBodyBytes`), and the handler reads as its steps: replay a kept
 * answer, or parse and validate, append, answer. A refused request changes nothing.
 */
export function ingestRoute(app: FastifyInstance, context: AppContext): void {
  const { config } = context;
  const parseOptions = {
    limits: {
      maxTriples: config.ingestMaxTriples,
      maxLiteralChars: config.ingestMaxLiteralChars,
      maxIriChars: config.ingestMaxIriChars,
      maxJsonDepth: config.ingestMaxJsonDepth,
    },
    contexts: new Map([[`${config.baseUrl}${CONTEXT_PATH}`, JSON.parse(context.contextDocument.toString('utf8')) as unknown]]),
  };

  // Checks that need no body, in the order docs/protocol.md gives; the key is claimed last, so
  // that a retry sent while the first request uploads is answered 409 before its body is read.
  app.addHook('onRequest', (request, _reply, done) => {
    const hub = hubOf(context, (request.params as { id: string }).id);
    const endpoint = ingestEndpointOf(context, hub);
    authorize(context.ingest.values(), endpoint, request.headers.authorization);
    const format = formatOf(request.headers['content-type']);
    decoderOf(request.headers['content-encoding']);
    const key = idempotencyKeyOf(request.headers['idempotency-key']);
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > config.ingestMaxBodyBytes) throw tooLarge(config.ingestMaxBodyBytes);
    if (key !== undefined && endpoint.idempotency.claim(key)?.state === 'pending') {
      throw new PublisherError('PUB_ERR_IDEMPOTENCY_KEY_IN_USE', 'Retry when the first request has been answered', {}, { 'retry-after': '1' });
    }
    ingestRequests.set(request, { hub, endpoint, format, key });
    done();
  });
  // A refused (or abandoned) request may be corrected and sent again with the same key.
  const release = (request: FastifyRequest) => {
    const ingest = ingestRequests.get(request);
    if (ingest?.key !== undefined) ingest.endpoint.idempotency.release(ingest.key);
  };
  app.addHook('onResponse', (request, _reply, done) => {
    release(request);
    done();
  });
  // A refusal sent before the body was read whole: read the rest (up to ingestMaxDiscardBytes)
  // so that the answer reaches a client that writes its whole body first, and keep the
  // connection (Fastify closes it after a body parser's error: that would reset it); or close
  // after a longer one.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode >= 400 && !request.raw.complete) {
      if (discardRefusedBody(request.raw, config.ingestMaxDiscardBytes)) reply.removeHeader('connection');
      else reply.header('connection', 'close');
    }
    done(null, payload);
  });
  app.addHook('onRequestAbort', (request, done) => {
    release(request);
    done();
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (request, payload, done) => {
    readBody(payload as Readable, decoderOf(request.headers['content-encoding']), config.ingestMaxBodyBytes).then(
      (body) => done(null, body),
      (error: Error) => done(error),
    );
  });

  app.post<{ Params: { id: string }; Body: Buffer }>(streamPath(':id'), async (request, reply) => {
    const { hub, endpoint, format, key } = ingestRequests.get(request) as IngestRequest;
    const body = request.body;
    const fingerprint = createHash('sha256').update(format).update('\0').update(body).digest('base64url');
    const kept = key === undefined ? undefined : endpoint.idempotency.get(key);
    if (kept?.state === 'done') return replay(reply, kept, fingerprint);
    const triples = await ingestedTriples(body, format, endpoint, { ...parseOptions, baseIri: `${hub.definition.iri}/` });
    let answer: IngestAnswer;
    try {
      answer = await append(hub, triples, request, key === undefined ? undefined : { key, fingerprint });
    } catch (error) {
      // A shared log holds the key already: another instance (or this one before a restart) answered it.
      if (!(error instanceof IdempotencyKeyTakenError) || key === undefined) throw error;
      const taken = {
        fingerprint: error.fingerprint,
        answer: ingestAnswer(error.epoch, {
          seq: error.seq,
          graph: elementGraphIri(config.baseUrl, hub.definition.id, error.epoch, error.seq),
          generatedAt: new Date(error.generatedAtMs),
        }),
      };
      if (taken.fingerprint === fingerprint) endpoint.idempotency.complete(key, fingerprint, taken.answer);
      return replay(reply, taken, fingerprint);
    }
    if (key !== undefined) endpoint.idempotency.complete(key, fingerprint, answer);
    return send(reply, answer);
  });
}

function ingestEndpointOf(context: AppContext, hub: StreamHub): IngestEndpoint {
  const endpoint = context.ingest.get(hub.definition.id);
  if (endpoint !== undefined) return endpoint;
  throw new PublisherError(
    'PUB_ERR_METHOD_NOT_ALLOWED',
    `Stream "${hub.definition.id}" is fed by its ${hub.source.kind} source; it does not accept POST`,
    {},
    { allow: 'GET, HEAD' },
  );
}

function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header) || !idempotencyKeyPattern.test(header)) {
    throw new PublisherError('PUB_ERR_INVALID_IDEMPOTENCY_KEY', 'Idempotency-Key must be 1–255 visible ASCII characters');
  }
  return header;
}

/**
 * Appends the element, with the request's key stored in the same record, and builds the 201;
 * 503 when the log cannot be written (nothing kept).
 */
async function append(
  hub: StreamHub,
  triples: Parameters<StreamHub['publishTriples']>[0],
  request: FastifyRequest,
  idempotency: IdempotencyStamp | undefined,
): Promise<IngestAnswer> {
  let element;
  try {
    element = await hub.publishTriples(triples, new Date(), idempotency);
  } catch (error) {
    if (!(error instanceof LogAppendError)) throw error;
    throw new PublisherError('PUB_ERR_LOG_UNAVAILABLE', `The element was not stored (${error.code ?? 'write error'})`, {}, { 'retry-after': '5' });
  }
  request.log.debug({ stream: hub.definition.id, seq: element.seq }, 'element ingested');
  return ingestAnswer(hub.log.epoch, element);
}

/**
 * The answer a key was first given, for a retry of the same request (same body); a different body
 * under the same key is refused (draft-ietf-httpapi-idempotency-key-header: 422).
 */
function replay(reply: FastifyReply, kept: { readonly fingerprint: string; readonly answer: IngestAnswer }, fingerprint: string): FastifyReply {
  if (kept.fingerprint !== fingerprint) throw new PublisherError('PUB_ERR_IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was sent with a different body');
  return send(reply, kept.answer, { 'idempotent-replayed': 'true' });
}

function send(reply: FastifyReply, answer: IngestAnswer, extra: Readonly<Record<string, string>> = {}): FastifyReply {
  return reply.code(answer.status).headers({ ...answer.headers, ...extra, 'cache-control': 'no-store' }).send(answer.body);
}
