import type { FastifyInstance } from 'fastify';
import { ONTOLOGIES_PATH } from '@rdf-stream/protocol';
import { echoed, PublisherError } from '../../errors.js';
import type { AppContext } from '../app-context.js';
import { sendStaticDocument } from '../static-document-reply.js';

/** Seconds a cache may keep an ontology document: it changes only with the publisher's version (ETag). */
const ONTOLOGY_MAX_AGE_SECONDS = 86_400;

/**
 * `GET /ontologies/{path}`: the documents of this project's IRIs (`https://w3id.org/rdf-stream/{path}`,
 * which w3id.org redirects here): the vocabulary, the SOSA profile and its SHACL shapes, in
 * every format, rendered at start.
 */
export function ontologiesRoute(app: FastifyInstance, context: AppContext): void {
  app.get(`${ONTOLOGIES_PATH}*`, (request, reply) => {
    const path = request.url.split('?')[0] as string;
    const document = context.ontologies.get(path);
    if (document === undefined) {
      throw new PublisherError('PUB_ERR_ROUTE_NOT_FOUND', `No document at ${echoed(path)}: served are ${[...context.ontologies.keys()].join(', ')}`);
    }
    return sendStaticDocument(request, reply, document, context.negotiation, {
      'cache-control': `public, max-age=${ONTOLOGY_MAX_AGE_SECONDS}`,
    });
  });
}
