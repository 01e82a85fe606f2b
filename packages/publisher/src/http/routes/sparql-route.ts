import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { streamPath, streamResources } from '@rdf-stream/protocol';
import { PublisherError } from '../../errors.js';
import { type SparqlOutcome, ThreadedSparqlEngine } from '../../publish/sparql/threaded-sparql-engine.js';
import { serviceDescriptionPrefixes, sparqlServiceQuads } from '../../publish/sparql/sparql-service-description.js';
import { parseSparqlWindow, readSparqlWindow } from '../../publish/sparql/sparql-window.js';
import { negotiateResultMediaTypes, sparqlResultContentType, sparqlResultKinds, sparqlResultMediaTypes } from '../../render/sparql-result-formats.js';
import { renderStaticDocument } from '../../render/static-document.js';
import { type AppContext, hubOf } from '../app-context.js';
import { FORM_MEDIA_TYPE, readSparqlRequest, SPARQL_QUERY_MEDIA_TYPE, updateRefused } from '../sparql/sparql-request.js';
import { sendStaticDocument } from '../static-document-reply.js';

/**
 * Percent-encoding makes a form up to three times as long as the query it carries: the body
 * limit lets such a form through, and the query is then held to `sparqlMaxQueryBytes` itself.
 */
const FORM_ENCODING_FACTOR = 3;

/**
 * The SPARQL 1.1 Protocol endpoint of each stream, `GET|POST /streams/{id}/sparql`: queries over
 * a window of its elements, evaluated in a worker thread (`ThreadedSparqlEngine`); without a
 * query, the SPARQL 1.1 Service Description of the endpoint, rendered once per stream.
 */
export function sparqlRoute(app: FastifyInstance, context: AppContext): void {
  const { config } = context;
  const engine = new ThreadedSparqlEngine(config);
  app.addHook('onClose', async () => engine.close());
  const descriptions = new Map(
    [...context.hubs.values()].map((hub) => [
      hub.definition.id,
      renderStaticDocument(sparqlServiceQuads(hub.definition.iri), context.jsonLd, serviceDescriptionPrefixes),
    ]),
  );

  app.removeAllContentTypeParsers();
  const bodyLimit = config.sparqlMaxQueryBytes * FORM_ENCODING_FACTOR;
  app.addContentTypeParser(SPARQL_QUERY_MEDIA_TYPE, { parseAs: 'string', bodyLimit }, (_request, body, done) => done(null, body));
  app.addContentTypeParser(FORM_MEDIA_TYPE, { parseAs: 'string', bodyLimit }, (_request, body, done) => done(null, new URLSearchParams(body as string)));
  // Named so that an update request finds its answer rather than a 415.
  app.addContentTypeParser('application/sparql-update', { parseAs: 'string', bodyLimit }, (_request, _body, done) => done(updateRefused(), undefined));

  const answer = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const hub = hubOf(context, request.params.id);
    const asked = readSparqlRequest(request, config.sparqlMaxQueryBytes);
    if (asked.query === undefined) {
      const description = descriptions.get(hub.definition.id);
      if (description === undefined) throw new Error(`No service description rendered for ${hub.definition.id}`);
      return sendStaticDocument(request, reply, description, context.negotiation);
    }
    const mediaTypes = negotiateResultMediaTypes(request.headers.accept);
    if (sparqlResultKinds.every((kind) => mediaTypes[kind] === undefined)) throw notAcceptable();
    const window = parseSparqlWindow(asked.elements, asked.duration, config.sparqlMaxElements);
    const elements = await readSparqlWindow(hub.log, window, config.sparqlMaxElements, Date.now());
    const outcome = await engine.evaluate({ query: asked.query, baseIri: streamResources(hub.definition.iri).sparql, elements, mediaTypes });
    if (outcome.kind !== 'result') throw outcomeError(outcome, config.sparqlTimeoutMs);
    return reply
      .headers({ 'content-type': sparqlResultContentType(outcome.mediaType), vary: 'Accept', 'cache-control': 'no-store' })
      .send(outcome.body);
  };
  app.get(streamPath(':id', 'sparql'), answer);
  app.post(streamPath(':id', 'sparql'), answer);
}

/** The problem of a query that ended without a result. */
function outcomeError(outcome: Exclude<SparqlOutcome, { kind: 'result' }>, timeoutMs: number): PublisherError {
  switch (outcome.kind) {
    case 'syntax': {
      const at = outcome.line === undefined ? '' : `Line ${outcome.line}${outcome.column === undefined ? '' : `, column ${outcome.column}`}: `;
      return new PublisherError('PUB_ERR_SPARQL_SYNTAX', `${at}${outcome.message}`, { line: outcome.line ?? null, column: outcome.column ?? null });
    }
    case 'update':
      return updateRefused();
    case 'not-acceptable':
      return notAcceptable(outcome.resultKind);
    case 'too-many-results':
      return new PublisherError(
        'PUB_ERR_SPARQL_TOO_MANY_RESULTS',
        `The result holds more than ${outcome.maxResults} rows or triples (sparqlMaxResults): add a LIMIT, or narrow the window`,
        { maxResults: outcome.maxResults },
      );
    case 'unsupported':
      return new PublisherError('PUB_ERR_SPARQL_UNSUPPORTED', outcome.message);
    case 'timeout':
      return new PublisherError('PUB_ERR_SPARQL_TIMEOUT', `The query ran longer than ${outcome.timeoutMs} ms (sparqlTimeoutMs): narrow the window, or simplify it`, {
        timeoutMs: outcome.timeoutMs,
      });
    case 'busy':
      return new PublisherError(
        'PUB_ERR_SPARQL_BUSY',
        `${outcome.maxQueued} queries are already waiting (sparqlMaxQueued)`,
        { maxQueued: outcome.maxQueued },
        { 'retry-after': String(Math.max(1, Math.ceil(timeoutMs / 1000))) },
      );
  }
}

function notAcceptable(kind?: keyof typeof sparqlResultMediaTypes): PublisherError {
  const offered = kind === undefined ? [...new Set(Object.values(sparqlResultMediaTypes).flat())] : sparqlResultMediaTypes[kind];
  const what = kind === undefined ? 'Results are' : { bindings: 'SELECT results are', boolean: 'ASK results are', quads: 'CONSTRUCT and DESCRIBE results are' }[kind];
  return new PublisherError('PUB_ERR_NOT_ACCEPTABLE', `${what} written as ${offered.join(', ')}`, { acceptable: offered });
}
