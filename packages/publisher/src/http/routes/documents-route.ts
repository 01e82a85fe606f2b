import type { FastifyInstance } from 'fastify';
import { CONTEXT_PATH } from '../../model/bundled-context.js';
import { streamLinks } from '../../publish/descriptor.js';
import { type AppContext, hubOf } from '../app-context.js';
import { PublisherError } from '../../errors.js';
import { entityTag, ifNoneMatchHits } from '../../render/etag.js';
import { contentType } from '../../render/formats.js';
import { frameDocument } from '../../render/sse-frame.js';
import { negotiatedFormat, sendStaticDocument } from '../rdf-document-reply.js';

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

  // An element of the history (the URL of its graph, and of an ingest answer's Location), as
  // long as the log retains it. Rebuilt from its SSE frame: the log keeps no other copy.
  app.get<{ Params: { id: string; seq: string } }>('/streams/:id/elements/:seq', (request, reply) => {
    const hub = hubOf(context, request.params.id);
    const seq = /^[1-9]\d{0,15}$/.test(request.params.seq) ? Number(request.params.seq) : undefined;
    const element = seq === undefined ? undefined : hub.log.get(seq);
    if (seq === undefined || element === undefined) {
      const oldest = hub.log.oldestSeq;
      throw new PublisherError(
        'PUB_ERR_ELEMENT_NOT_FOUND',
        oldest === undefined ? 'The stream has no element yet' : `Retained elements: ${oldest} to ${hub.log.latestSeq}`,
        { oldestSeq: oldest ?? null, latestSeq: hub.log.latestSeq },
      );
    }
    const format = negotiatedFormat(request, negotiation);
    // The memory log numbers elements again after a restart: the epoch keeps ETags apart, and the
    // freshness stays short rather than immutable.
    reply.headers({
      etag: entityTag(hub.log.epoch, seq, format),
      vary: 'Accept',
      'cache-control': 'public, max-age=60',
      'last-modified': element.generatedAt.toUTCString(),
    });
    if (ifNoneMatchHits(request.headers['if-none-match'], hub.log.epoch, seq, format)) return reply.code(304).send();
    return reply.header('content-type', contentType(format)).send(frameDocument(element.frames[format], format !== 'jsonld'));
  });

  app.get(CONTEXT_PATH, (_request, reply) =>
    reply
      .headers({ 'content-type': 'application/ld+json', 'cache-control': 'public, max-age=86400' })
      .send(context.contextDocument),
  );
}
