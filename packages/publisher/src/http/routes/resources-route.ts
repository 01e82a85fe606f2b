import type { FastifyInstance } from 'fastify';
import { streamPath } from '@rdf-stream/protocol';
import { echoed, PublisherError } from '../../errors.js';
import { cacheHeaders } from '../../render/headers/cache-headers.js';
import { elementNotModified, entityTag } from '../../render/headers/etag.js';
import { contentType } from '../../render/output-formats.js';
import { resourceDocuments } from '../../render/resource-document.js';
import { type AppContext, hubOf } from '../app-context.js';
import { negotiatedFormat } from '../static-document-reply.js';
import { prefersHtml } from './page-route.js';

/**
 * `GET /streams/{id}/sensors/{local}` and `/streams/{id}/facilities/{local}`: the sensors and
 * features of interest a stream mints, each described as of the newest element that mentions it
 * (`ResourceIndex`), in every RDF format. The description changes only with an element, so it
 * is cached as `/latest` is (until the next element is due) and validated by the element it
 * comes from. A browser is sent (303) to the stream's live page.
 */
export function resourcesRoute(app: FastifyInstance, context: AppContext): void {
  const documentOf = resourceDocuments(context.jsonLd);
  for (const collection of ['sensors', 'featuresOfInterest'] as const) {
    app.get<{ Params: { id: string; local: string } }>(`${streamPath(':id', collection)}/:local`, (request, reply) => {
      const hub = hubOf(context, request.params.id);
      const { definition } = hub;
      // The IRI as the stream minted it: the path as sent (percent-encoding untouched), below the stream's IRI.
      const path = request.url.split('?')[0] as string;
      const iri = `${definition.iri}${path.slice(streamPath(definition.id).length)}`;
      reply.header('vary', 'Accept');
      const description = hub.resources.get(iri);
      const latest = hub.latest;
      if (description === undefined || latest === undefined) {
        throw new PublisherError(
          'PUB_ERR_RESOURCE_NOT_FOUND',
          `No element of stream "${definition.id}" since the publisher started mentions ${echoed(iri)}`,
        );
      }
      if (prefersHtml(request.headers.accept)) return reply.code(303).header('location', definition.iri).send();
      const format = negotiatedFormat(request, context.negotiation);
      const epoch = hub.log.epoch;
      const freshness = {
        generatedAtMs: latest.generatedAt.getTime(),
        expectedIntervalMs: definition.expectedIntervalMs,
        microCacheSeconds: context.config.microCacheSeconds,
      };
      reply.headers({
        ...cacheHeaders(freshness, Date.now()),
        // The description is as old as the element it comes from, however newer /latest is.
        'last-modified': description.generatedAt.toUTCString(),
        etag: entityTag(epoch, description.seq, format),
      });
      if (elementNotModified(request.headers, epoch, description.seq, format, description.generatedAt.getTime())) {
        return reply.code(304).send();
      }
      return reply.header('content-type', contentType(format)).send(documentOf(description, format));
    });
  }
}
