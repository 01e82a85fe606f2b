import type { FastifyRequest } from 'fastify';
import { echoed, PublisherError } from '../../errors.js';
import { windowParameters } from '../../publish/sparql/sparql-window.js';

/** The body media types of a SPARQL 1.1 Protocol query by POST. */
export const SPARQL_QUERY_MEDIA_TYPE = 'application/sparql-query';
export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/** What a SPARQL 1.1 Protocol request asks: a query (none: the service description) and its window. */
export interface SparqlProtocolRequest {
  readonly query: string | undefined;
  readonly elements: string | undefined;
  readonly duration: string | undefined;
}

/**
 * Reads a query request of the SPARQL 1.1 Protocol (§2.1): `GET ?query=`, `POST` of a form with
 * `query=`, or `POST` of an `application/sparql-query` body; the window's parameters from the URL
 * (or the form). Refuses what the protocol calls malformed (a repeated or missing `query`), an
 * update request, and an RDF dataset named by `default-graph-uri` / `named-graph-uri` (the
 * dataset is the window). The query may hold at most `maxQueryBytes` bytes.
 */
export function readSparqlRequest(request: FastifyRequest, maxQueryBytes: number): SparqlProtocolRequest {
  const search = new URLSearchParams(request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '');
  const form = request.body instanceof URLSearchParams ? request.body : undefined;
  const params = (name: string) => [...search.getAll(name), ...(form?.getAll(name) ?? [])];
  if (params('update').length > 0) throw updateRefused();
  for (const name of ['default-graph-uri', 'named-graph-uri', 'using-graph-uri', 'using-named-graph-uri']) {
    if (params(name).length > 0) {
      throw new PublisherError('PUB_ERR_SPARQL_BAD_REQUEST', `${name} is not supported: the dataset is the window of the stream's elements`);
    }
  }
  const queries = params('query');
  if (typeof request.body === 'string') queries.push(request.body);
  else if (request.method === 'POST' && form === undefined) {
    throw new PublisherError('PUB_ERR_UNSUPPORTED_MEDIA_TYPE', `POST a query as ${SPARQL_QUERY_MEDIA_TYPE} or as ${FORM_MEDIA_TYPE} with query=`);
  }
  if (queries.length > 1) throw new PublisherError('PUB_ERR_SPARQL_BAD_REQUEST', 'Give exactly one query');
  const [query] = queries;
  if (request.method === 'POST' && query === undefined) throw new PublisherError('PUB_ERR_SPARQL_BAD_REQUEST', 'The form holds no query=');
  if (query !== undefined && Buffer.byteLength(query) > maxQueryBytes) {
    throw new PublisherError('PUB_ERR_SPARQL_QUERY_TOO_LARGE', `The query holds more than ${maxQueryBytes} bytes (sparqlMaxQueryBytes)`, { maxQueryBytes });
  }
  return { query, elements: single(params(windowParameters.elements), windowParameters.elements), duration: single(params(windowParameters.duration), windowParameters.duration) };
}

export const updateRefused = () =>
  new PublisherError('PUB_ERR_SPARQL_UPDATE_REFUSED', 'This endpoint answers queries only (SELECT, ASK, CONSTRUCT, DESCRIBE); the stream is written by its source');

function single(values: readonly string[], name: string): string | undefined {
  if (values.length > 1) throw new PublisherError('PUB_ERR_SPARQL_BAD_REQUEST', `Give ${name}= once (got "${echoed(values.join(', '))}")`);
  return values[0];
}
