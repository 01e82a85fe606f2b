import type { FastifyInstance } from 'fastify';
import { CONTEXT_PATH, elementId, EVENT_STREAM_MEDIA_TYPE, mediaTypes, parseElementId } from '@rdf-stream/protocol';
import { streamLinks } from '../../publish/descriptor.js';
import { STORAGE_DESCRIPTION_REL, subscriptionServiceLinks } from '../../publish/notifications/service-description.js';
import { type AppContext, hubOf } from '../app-context.js';
import { PublisherError } from '../../errors.js';
import { elementNotModified, entityTag } from '../../render/headers/etag.js';
import { contentType } from '../../render/output-formats.js';
import { frameDocument } from '../../render/sse-frame.js';
import { negotiatedFormat, sendStaticDocument } from '../static-document-reply.js';

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
        `<${links.events}>; rel="alternate"; type="${EVENT_STREAM_MEDIA_TYPE}"`,
        `<${links.webSocket}>; rel="alternate"`,
        `<${links.history}>; rel="https://w3id.org/tree#view"`,
        `<${context.config.baseUrl}${CONTEXT_PATH}>; rel="http://www.w3.org/ns/json-ld#context"; type="${mediaTypes.jsonld}"`,
        `<${subscriptionServiceLinks(context.config.baseUrl).description}>; rel="${STORAGE_DESCRIPTION_REL}"`,
      ].join(', '),
    });
  });

  // An element of the history (the URL of its graph, and of an ingest answer's Location), read
  // from the log and rebuilt from its SSE frame. Its id carries the log's epoch, so the URL never
  // names another element: immutable. One of an earlier epoch, or removed by retention: 410.
  app.get<{ Params: { id: string; elementId: string } }>('/streams/:id/elements/:elementId', async (request, reply) => {
    const hub = hubOf(context, request.params.id);
    const { log } = hub;
    const id = parseElementId(request.params.elementId);
    const element = id === undefined || id.epoch !== log.epoch ? undefined : await log.get(id.seq);
    if (id === undefined || element === undefined) {
      const retained = { epoch: log.epoch, oldestSeq: log.oldestSeq ?? null, latestSeq: log.latestSeq };
      const range = log.oldestSeq === undefined ? 'none' : `${elementId(log.epoch, log.oldestSeq)} to ${elementId(log.epoch, log.latestSeq)}`;
      const gone = id !== undefined && (id.epoch !== log.epoch || id.seq < (log.oldestSeq ?? log.latestSeq + 1));
      throw new PublisherError(gone ? 'PUB_ERR_ELEMENT_GONE' : 'PUB_ERR_ELEMENT_NOT_FOUND', `Retained elements: ${range}`, retained);
    }
    const seq = element.seq;
    const format = negotiatedFormat(request, negotiation);
    reply.headers({
      etag: entityTag(log.epoch, seq, format),
      vary: 'Accept',
      'cache-control': 'public, max-age=31536000, immutable',
      'last-modified': element.generatedAt.toUTCString(),
    });
    if (elementNotModified(request.headers, log.epoch, seq, format, element.generatedAt.getTime())) return reply.code(304).send();
    return reply.header('content-type', contentType(format)).send(frameDocument(element.frames[format], format !== 'jsonld'));
  });

  app.get(CONTEXT_PATH, (_request, reply) =>
    reply
      .headers({ 'content-type': mediaTypes.jsonld, 'cache-control': 'public, max-age=86400' })
      .send(context.contextDocument),
  );
}
