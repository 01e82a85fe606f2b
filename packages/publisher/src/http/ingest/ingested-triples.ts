import type { Quad } from '@rdfjs/types';
import { echoed, PublisherError } from '../../errors.js';
import type { InputFormat } from '../../model/input-formats.js';
import { type InputLimits, type ParseOptions, parseRdfInput, RdfInputError } from '../../model/rdf-input.js';
import { ValidationQueueFullError } from '../../model/threaded-shape-validator.js';
import type { IngestEndpoint } from './ingest-endpoint.js';

const MAX_LISTED_VIOLATIONS = 100;

/**
 * The triples of an ingest body, checked: UTF-8, the format's syntax, lone surrogates included
 * (400 with the line), the nesting of a JSON-LD body (400), the count limits (413), not empty
 * (422), the stream's SHACL shapes (422 with the violations; 503 when
 * `ingestMaxPendingValidations` already wait).
 */
export async function ingestedTriples(
  body: Buffer,
  format: InputFormat,
  endpoint: IngestEndpoint,
  options: Omit<ParseOptions, 'format'>,
): Promise<Quad[]> {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    const line = lineOfInvalidUtf8(body);
    throw new PublisherError('PUB_ERR_RDF_SYNTAX', `The body is not valid UTF-8 on line ${line}`, { line });
  }
  let triples: Quad[];
  try {
    triples = await parseRdfInput(text, { ...options, format });
  } catch (error) {
    if (error instanceof RdfInputError) throw inputError(error, options.limits);
    throw error;
  }
  if (endpoint.validator === null) return triples;
  let report;
  try {
    report = await endpoint.validator.validate(triples);
  } catch (error) {
    if (!(error instanceof ValidationQueueFullError)) throw error;
    throw new PublisherError('PUB_ERR_OVERLOADED', `Too many elements are waiting for validation: ${error.message}`, {}, { 'retry-after': '1' });
  }
  if (!report.conforms) {
    throw new PublisherError('PUB_ERR_SHAPE_VIOLATION', `${report.violations.length} violation(s) of the stream's shapes`, {
      violations: report.violations.slice(0, MAX_LISTED_VIOLATIONS).map((violation) => ({ ...violation, focusNode: echoed(violation.focusNode) })),
    });
  }
  return triples;
}

/**
 * The line of the first byte that is not UTF-8 (the encoding of a surrogate included): where a
 * lossy decoding, encoded again, first differs from the body.
 */
function lineOfInvalidUtf8(body: Buffer): number {
  const lossy = Buffer.from(body.toString('utf8'), 'utf8');
  let offset = 0;
  while (offset < body.length && body[offset] === lossy[offset]) offset++;
  let line = 1;
  for (let index = 0; index < offset; index++) if (body[index] === 0x0a) line++;
  return line;
}

function inputError(error: RdfInputError, limits: InputLimits): PublisherError {
  const line = error.line === undefined ? {} : { line: error.line };
  switch (error.reason) {
    case 'syntax':
      return new PublisherError('PUB_ERR_RDF_SYNTAX', error.message, line);
    case 'remote-context':
      return new PublisherError('PUB_ERR_REMOTE_CONTEXT', error.message);
    case 'forbidden-key':
      return new PublisherError('PUB_ERR_FORBIDDEN_KEY', error.message);
    case 'limit':
      return new PublisherError('PUB_ERR_ELEMENT_TOO_LARGE', error.message);
    case 'too-deep':
      return new PublisherError('PUB_ERR_JSON_TOO_DEEP', error.message, { limitDepth: limits.maxJsonDepth, ...line });
    case 'empty':
      return new PublisherError('PUB_ERR_EMPTY_ELEMENT', error.message);
  }
}
