import type { FastifyInstance, FastifyReply } from 'fastify';
import { PublisherError } from '../../errors.js';
import { TooManyWaitersError } from '../../publish/long-poll-waiters.js';
import type { LatestElement, StreamHub } from '../../publish/stream-hub.js';
import { cacheHeaders } from '../../render/cache-headers.js';
import type { Encoding } from '../../render/compress.js';
import { ifNoneMatchHits } from '../../render/etag.js';
import { contentType, type FormatName } from '../../render/formats.js';
import { type AppContext, hubOf } from '../app-context.js';
import { preferredWaitSeconds } from '../prefer-wait.js';
import { negotiatedFormat } from '../rdf-document-reply.js';

/**
 * `GET /streams/:id/latest`: the latest element from pre-rendered, pre-compressed bytes, with
 * freshness until the next expected element, validators and 304; held as a long-poll when the
 * client already has it and sends `Prefer: wait=N`.
 */
export function latestRoute(app: FastifyInstance, context: AppContext): void {
  const { config, negotiation } = context;

  app.get<{ Params: { id: string } }>('/streams/:id/latest', async (request, reply) => {
    const hub = hubOf(context, request.params.id);
    const format = negotiatedFormat(request, negotiation);
    const encoding = negotiation.encoding(request.headers['accept-encoding']);
    if (encoding === undefined) {
      throw new PublisherError('PUB_ERR_NOT_ACCEPTABLE', 'Acceptable content codings: br, gzip, identity', {
        acceptable: ['br', 'gzip', 'identity'],
      });
    }
    let latest = latestOf(hub);
    const ifNoneMatch = request.headers['if-none-match'];
    if (ifNoneMatchHits(ifNoneMatch, hub.log.epoch, latest.seq, format)) {
      const waitSeconds = preferredWaitSeconds(request.headers.prefer);
      if (waitSeconds !== undefined && waitSeconds > 0 && !context.lifecycle.closing) {
        const outcome = await waitForNext(hub, Math.min(waitSeconds, config.maxLongPollWaitSeconds), reply);
        if (outcome === 'aborted') return reply;
        latest = latestOf(hub);
      }
      if (ifNoneMatchHits(ifNoneMatch, hub.log.epoch, latest.seq, format)) {
        return reply.code(304).headers(representationHeaders(hub, latest, format, encoding)).send();
      }
    }
    return reply
      .headers(representationHeaders(hub, latest, format, encoding))
      .header('content-type', contentType(format))
      .send(latest.bodies[format][encoding]);
  });

  function representationHeaders(hub: StreamHub, latest: LatestElement, format: FormatName, encoding: Encoding) {
    const headers: Record<string, string> = {
      ...cacheHeaders(
        {
          generatedAtMs: latest.generatedAt.getTime(),
          expectedIntervalMs: hub.definition.expectedIntervalMs,
          microCacheSeconds: config.microCacheSeconds,
        },
        Date.now(),
      ),
      etag: latest.etags[format][encoding],
      vary: 'Accept, Accept-Encoding',
      link: `<${hub.definition.iri}>; rel="describedby"`,
    };
    if (encoding !== 'identity') headers['content-encoding'] = encoding;
    return headers;
  }

  async function waitForNext(hub: StreamHub, seconds: number, reply: FastifyReply) {
    const abort = new AbortController();
    const onClose = () => abort.abort();
    reply.raw.once('close', onClose);
    try {
      return await hub.waiters.wait(seconds * 1000, abort.signal);
    } catch (error) {
      if (error instanceof TooManyWaitersError) {
        throw new PublisherError('PUB_ERR_LONG_POLL_LIMIT', error.message, {}, { 'retry-after': '1' });
      }
      throw error;
    } finally {
      reply.raw.off('close', onClose);
    }
  }
}

function latestOf(hub: StreamHub): LatestElement {
  const latest = hub.latest;
  if (latest === undefined) {
    throw new PublisherError('PUB_ERR_NO_ELEMENT_YET', undefined, {}, { 'retry-after': '1' });
  }
  return latest;
}
