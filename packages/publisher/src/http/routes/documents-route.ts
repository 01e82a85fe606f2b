import type { FastifyInstance } from 'fastify';
import { CONTEXT_PATH } from '../../model/bundled-context.js';
import { streamLinks } from '../../publish/descriptor.js';
import { type AppContext, hubOf } from '../app-context.js';
import { sendStaticDocument } from '../rdf-document-reply.js';

/** The catalogue, the stream descriptors (with `Link` headers to every interface) and the JSON-LD context. */
export function documentsRoute(app: FastifyInstance, context: AppContext): void {
  const { negotiation } = context;

  app.get('/streams', (request, reply) => sendStaticDocument(request, reply, context.catalogue, negotiation));

  app.get<{ Params: { id: string } }>('/streams/:id', (request, reply) => {
    const hub = hubOf(context, request.params.id);
    const links = streamLinks(hub.definition.iri);
    const descriptor = context.descriptors.get(hub.definition.id);
    if (descriptor === undefined) throw new Error(`No descriptor rendered for ${hub.definition.id}`);
    return sendStaticDocument(request, reply, descriptor, negotiation, {
      link: [
        `<${links.latest}>; rel="latest-version"`,
        `<${links.events}>; rel="alternate"; type="text/event-stream"`,
        `<${context.config.baseUrl}${CONTEXT_PATH}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`,
      ].join(', '),
    });
  });

  app.get(CONTEXT_PATH, (_request, reply) =>
    reply
      .headers({ 'content-type': 'application/ld+json', 'cache-control': 'public, max-age=86400' })
      .send(context.contextDocument),
  );
}
