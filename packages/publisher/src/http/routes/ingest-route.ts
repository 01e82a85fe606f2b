import { LogAppendError } from '../../log/event-log.js';
import { elementId } from '../../model/stream-element.js';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import contentType from 'content-type';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PublisherError } from '../../errors.js';
import { CONTEXT_PATH } from '../../model/bundled-context.js';
import { type InputFormat, rdfMediaTypes } from '../../model/rdf-formats.js';
import { parseRdfInput, RdfInputError } from '../../model/rdf-input.js';
import { ValidationQueueFullError } from '../../model/threaded-shape-validator.js';
import { type AppContext, hubOf } from '../app-context.js';
import type { IngestAnswer, IngestEndpoint } from '../ingest-endpoint.js';
import { tokenOwner } from '../ingest-endpoint.js';

/** Accepted request media types (compared case-insensitively, as RFC 9110 requires). */
const mediaTypes: Readonly<Record<string, InputFormat>> = Object.fromEntries(
  Object.entries(rdfMediaTypes).map(([format, mediaType]) => [mediaType, format as InputFormat]),
);
const ACCEPT_POST = Object.keys(mediaTypes).join(', ');
const decoders = { gzip: createGunzip, 'x-gzip': createGunzip, br: createBrotliDecompress, deflate: createInflate } as const;
/** RFC draft-ietf-httpapi-idempotency-key-header: an opaque string; we accept 1–255 visible ASCII characters. */
const idempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/;
const MAX_LISTED_VIOLATIONS = 100;

const unsupported = (detail: string) =>
  new PublisherError('PUB_ERR_UNSUPPORTED_MEDIA_TYPE', detail, { accepted: Object.keys(mediaTypes) }, { 'accept-post': ACCEPT_POST });

/**
 * The request's format. Only the exact grammar of RFC 9110 is accepted — one media type, with at
 * most `charset=utf-8` (and `profile` for JSON-LD) as parameters — so that a body cannot be
 * smuggled past the parser under a look-alike type.
 */
function formatOf(header: string | undefined): InputFormat {
  if (header === undefined || header.trim() === '') throw unsupported('A Content-Type is required');
  let parsed: contentType.ParsedMediaType;
  try {
    parsed = contentType.parse(header);
  } catch {
    throw unsupported(`Malformed Content-Type: ${JSON.stringify(header)}`);
  }
  const format = Object.hasOwn(mediaTypes, parsed.type) ? mediaTypes[parsed.type] : undefined;
  if (format === undefined) throw unsupported(`Content-Type ${parsed.type} is not accepted`);
  for (const [name, value] of Object.entries(parsed.parameters)) {
    if (name === 'charset' && /^utf-?8$/i.test(value)) continue;
    if (name === 'profile' && format === 'jsonld') continue;
    throw unsupported(`Content-Type parameter ${name}=${value} is not accepted (UTF-8 only)`);
  }
  return format;
}

function decoderOf(header: string | undefined) {
  const coding = (header ?? 'identity').trim().toLowerCase();
  if (coding === 'identity' || coding === '') return undefined;
  if (Object.hasOwn(decoders, coding)) return decoders[coding as keyof typeof decoders];
  throw unsupported(`Content-Encoding ${JSON.stringify(header)} is not supported (gzip, br, deflate)`);
}

const tooLarge = (limit: number) =>
  new PublisherError('PUB_ERR_BODY_TOO_LARGE', `The body exceeds ${limit} bytes`, { limitBytes: limit }, { connection: 'close' });

/** Reads the body, decompressing it, and stops as soon as `limit` bytes (after decompression) are exceeded. */
async function readBody(raw: Readable, decoder: ReturnType<typeof decoderOf>, limit: number): Promise<Buffer> {
  const stream = decoder === undefined ? raw : raw.pipe(decoder());
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw tooLarge(limit);
      chunks.push(chunk);
    }
  } catch (error) {
    if (stream !== raw) stream.destroy();
    if (error instanceof PublisherError) throw error;
    throw new PublisherError('PUB_ERR_BAD_REQUEST', `The body could not be read: ${(error as Error).message}`);
  }
  return Buffer.concat(chunks, size);
}

function authorize(context: AppContext, endpoint: IngestEndpoint, header: string | undefined): void {
  const challenge = (error?: string) => ({
    'www-authenticate': `Bearer realm="rdf-stream"${error === undefined ? '' : `, error="${error}"`}`,
  });
  const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(header ?? '');
  if (match === null) {
    throw new PublisherError('PUB_ERR_UNAUTHORIZED', 'Send Authorization: Bearer <token>', {}, challenge(header ? 'invalid_request' : undefined));
  }
  const owner = tokenOwner(context.ingest.values(), match[1] as string);
  if (owner === undefined) throw new PublisherError('PUB_ERR_UNAUTHORIZED', 'The token is not valid', {}, challenge('invalid_token'));
  if (owner !== endpoint.streamId) {
    throw new PublisherError('PUB_ERR_FORBIDDEN', `The token does not grant access to stream "${endpoint.streamId}"`, {}, challenge('insufficient_scope'));
  }
}

function inputError(error: RdfInputError): PublisherError {
  switch (error.reason) {
    case 'syntax':
      return new PublisherError('PUB_ERR_RDF_SYNTAX', error.message, error.line === undefined ? {} : { line: error.line });
    case 'remote-context':
      return new PublisherError('PUB_ERR_REMOTE_CONTEXT', error.message);
    case 'forbidden-key':
      return new PublisherError('PUB_ERR_FORBIDDEN_KEY', error.message);
    case 'limit':
      return new PublisherError('PUB_ERR_ELEMENT_TOO_LARGE', error.message);
    case 'empty':
      return new PublisherError('PUB_ERR_EMPTY_ELEMENT', error.message);
  }
}

/**
 * `POST /streams/{id}`: appends one element to an ingest stream. Every check — token, media
 * type, size, syntax, count limits, SHACL shapes — runs before the element is published, so a
 * refused request changes nothing. With `Idempotency-Key`, a retry gets the first answer.
 */
export function ingestRoute(app: FastifyInstance, context: AppContext): void {
  const { config } = context;
  const contexts = new Map([[`${config.baseUrl}${CONTEXT_PATH}`, JSON.parse(context.contextDocument.toString('utf8')) as unknown]]);
  // The route reads (and decompresses) the body itself, with its own limit.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

  app.post<{ Params: { id: string } }>('/streams/:id', async (request, reply) => {
    const hub = hubOf(context, request.params.id);
    const endpoint = context.ingest.get(hub.definition.id);
    if (endpoint === undefined) {
      throw new PublisherError(
        'PUB_ERR_METHOD_NOT_ALLOWED',
        `Stream "${hub.definition.id}" is fed by its ${hub.source.kind} source; it does not accept POST`,
        {},
        { allow: 'GET, HEAD' },
      );
    }
    authorize(context, endpoint, request.headers.authorization);
    const format = formatOf(request.headers['content-type']);
    const decoder = decoderOf(request.headers['content-encoding']);
    const key = request.headers['idempotency-key'];
    if (key !== undefined && (Array.isArray(key) || !idempotencyKeyPattern.test(key))) {
      throw new PublisherError('PUB_ERR_INVALID_IDEMPOTENCY_KEY', 'Idempotency-Key must be 1–255 visible ASCII characters');
    }
    const limit = config.ingestMaxBodyBytes;
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
    const read = () => readBody(request.body as Readable, decoder, limit);
    const fingerprintOf = (body: Buffer) => createHash('sha256').update(format).update('\0').update(body).digest('base64url');

    if (key === undefined) return send(reply, await ingest(request, await read(), format, endpoint));
    const stored = endpoint.idempotency.get(key);
    if (stored?.state === 'pending') {
      // Answered before the body is read: the first request with this key is still in progress.
      throw new PublisherError('PUB_ERR_IDEMPOTENCY_KEY_IN_USE', 'Retry when the first request has been answered', {}, { 'retry-after': '1' });
    }
    if (stored !== undefined) {
      if (stored.fingerprint !== fingerprintOf(await read())) {
        throw new PublisherError('PUB_ERR_IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was sent with a different body');
      }
      return send(reply, stored.answer, { 'idempotent-replayed': 'true' });
    }
    // Taken before the body is read, so that a retry sent while this one uploads is told so.
    endpoint.idempotency.set(key, { state: 'pending' });
    try {
      const body = await read();
      const answer = await ingest(request, body, format, endpoint);
      endpoint.idempotency.set(key, { state: 'done', fingerprint: fingerprintOf(body), answer });
      return send(reply, answer);
    } catch (error) {
      // A refused request may be corrected and sent again with the same key.
      endpoint.idempotency.delete(key);
      throw error;
    }
  });

  async function ingest(request: FastifyRequest<{ Params: { id: string } }>, body: Buffer, format: InputFormat, endpoint: IngestEndpoint): Promise<IngestAnswer> {
    const hub = hubOf(context, endpoint.streamId);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    } catch {
      throw new PublisherError('PUB_ERR_RDF_SYNTAX', 'The body is not valid UTF-8');
    }
    let triples;
    try {
      triples = await parseRdfInput(text, {
        format,
        baseIri: `${hub.definition.iri}/`,
        limits: { maxTriples: config.ingestMaxTriples, maxLiteralChars: config.ingestMaxLiteralChars, maxIriChars: config.ingestMaxIriChars },
        contexts,
      });
    } catch (error) {
      if (error instanceof RdfInputError) throw inputError(error);
      throw error;
    }
    if (endpoint.validator !== null) {
      let report;
      try {
        report = await endpoint.validator.validate(triples);
      } catch (error) {
        if (!(error instanceof ValidationQueueFullError)) throw error;
        throw new PublisherError('PUB_ERR_OVERLOADED', `Too many elements are waiting for validation: ${error.message}`, {}, { 'retry-after': '1' });
      }
      if (!report.conforms) {
        throw new PublisherError('PUB_ERR_SHAPE_VIOLATION', `${report.violations.length} violation(s) of the stream's shapes`, {
          violations: report.violations.slice(0, MAX_LISTED_VIOLATIONS),
        });
      }
    }
    let element;
    try {
      element = await hub.publishTriples(triples, new Date());
    } catch (error) {
      if (!(error instanceof LogAppendError)) throw error;
      // Nothing was kept: the client may send the same element again.
      throw new PublisherError('PUB_ERR_LOG_UNAVAILABLE', `The element was not stored (${error.code ?? 'write error'})`, {}, { 'retry-after': '5' });
    }
    request.log.debug({ stream: hub.definition.id, seq: element.seq }, 'element ingested');
    return {
      status: 201,
      headers: { location: element.graph, 'content-type': 'application/json' },
      body: JSON.stringify({ id: elementId(hub.log.epoch, element.seq), seq: element.seq, element: element.graph, generatedAt: element.generatedAt.toISOString() }),
    };
  }
}

function send(reply: FastifyReply, answer: IngestAnswer, extra: Readonly<Record<string, string>> = {}): FastifyReply {
  return reply.code(answer.status).headers({ ...answer.headers, ...extra, 'cache-control': 'no-store' }).send(answer.body);
}
