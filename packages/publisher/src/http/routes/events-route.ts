import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type FormatName, formatNames, isFormatName, STREAM_GAP_HEADER, streamFeeds } from '@rdf-stream/protocol';
import { PublisherError } from '../../errors.js';
import type { Feed } from '../../publish/sse/element-patches.js';
import { gapFrame, parseEventId, selectResume, streamGapHeader } from '../../publish/sse/resume.js';
import { EventStreamEncoder, type SseEncoding } from '../../render/event-stream-encoder.js';
import { sseFrame } from '../../render/sse-frame.js';
import { eventStreamOutput } from '../event-stream-sink.js';
import { shedStream, streamHeaders } from '../sse-headers-and-retries.js';
import { type AppContext, hubOf } from '../app-context.js';

/** Requests that arrived while the process was under pressure (marked by under-pressure's hook). */
const arrivedUnderPressure = new WeakSet<FastifyRequest>();

interface EventsRequest {
  Params: { id: string };
  /** Repeated parameters arrive as arrays: the first value counts. */
  Querystring: { format?: string | string[]; lastEventId?: string | string[] };
}

/**
 * `GET /streams/:id/events`: Server-Sent Events; `GET /streams/:id/patches`: the same, each
 * event an RDF Patch from the previous element's `/latest` to this one's. The response is hijacked from Fastify and the
 * socket handed to the stream's broadcaster, which writes pre-built frames to it.
 *
 * With `Accept-Encoding: gzip` (every browser sends it), the stream is gzip-compressed, each
 * event once for all such subscribers (`event-stream-encoder.ts`).
 *
 * Shedding: an EventSource gives up for good on any non-200 answer, so a subscriber that cannot
 * be taken now (pressure, subscriber limit, shutdown) gets a 200 stream carrying `retry:` with
 * jitter and a `shed` event, then the end of the stream: it comes back later by itself.
 */
export function eventsRoute(app: FastifyInstance, context: AppContext): void {
  const { config } = context;

  const options = {
    config: {
      pressureHandler: (request: FastifyRequest) => {
        arrivedUnderPressure.add(request);
      },
    },
  };
  app.get<EventsRequest>(`/streams/:id/${streamFeeds.events}`, options, (request, reply) =>
    subscribe(request, reply, () => formatOf(first(request.query.format))),
  );
  // The same machinery (resume, limits, eviction, shedding, gzip once per event), fed each
  // element's RDF Patch instead of the element (see `preparePatch`); `?format=` does not apply.
  app.get<EventsRequest>(`/streams/:id/${streamFeeds.patches}`, options, (request, reply) => subscribe(request, reply, () => 'patch'));

  function subscribe(request: FastifyRequest<EventsRequest>, reply: FastifyReply, feedOf: () => Feed): void {
    const hub = hubOf(context, request.params.id);
    const format = feedOf();
    const encoding = context.negotiation.sseEncoding(request.headers['accept-encoding']);
    if (encoding === undefined) {
      throw new PublisherError('PUB_ERR_NOT_ACCEPTABLE', 'Acceptable content codings for an event stream: gzip, identity', {
        acceptable: ['gzip', 'identity'],
      });
    }
    const lastEventId = parseEventId(first(request.headers['last-event-id']) ?? first(request.query.lastEventId));
    if (lastEventId === null) {
      throw new PublisherError('PUB_ERR_INVALID_EVENT_ID', 'Last-Event-ID must be an element id ({epoch}-{seq}) sent by this publisher');
    }
    if (context.lifecycle.closing) {
      return shed(reply, encoding, 'PUB_ERR_SHUTTING_DOWN', config.sseRetryMs + config.shutdownRetryJitterMs);
    }
    if (arrivedUnderPressure.has(request)) {
      return shed(reply, encoding, 'PUB_ERR_OVERLOADED', config.pressureRetryAfterSeconds * 1000);
    }
    if (hub.subscribersFull) {
      return shed(reply, encoding, 'PUB_ERR_OVERLOADED', config.sseRetryMs * 2);
    }

    const plan = selectResume(lastEventId, hub.log);
    const headers = streamHeaders(reply, encoding);
    let preamble = sseFrame({ comment: 'ok', retry: config.sseRetryMs });
    if (plan.kind === 'gap') {
      headers[STREAM_GAP_HEADER.toLowerCase()] = streamGapHeader(plan.requestedId, hub.log.epoch, plan.fromSeq, plan.reason);
      preamble += gapFrame(plan.requestedId, hub.log.epoch, plan.fromSeq, plan.reason);
    }
    reply.hijack();
    const response = reply.raw;
    response.writeHead(200, headers);
    response.flushHeaders();
    // From here on the socket carries the body, framed as the response chose (chunked on
    // HTTP/1.1): every event is ready bytes for one socket write.
    const { sink, encoder } = eventStreamOutput(response, encoding);
    sink.write(encoder.start(preamble));
    hub.subscribe(sink, format, encoder, plan);
  }

  function shed(reply: FastifyReply, encoding: SseEncoding, code: 'PUB_ERR_OVERLOADED' | 'PUB_ERR_SHUTTING_DOWN', maxDelayMs: number) {
    const { retryAfter, body } = shedStream(code, config.sseRetryMs, maxDelayMs);
    reply.hijack();
    reply.raw.writeHead(200, { ...streamHeaders(reply, encoding), 'retry-after': retryAfter });
    const encoder = new EventStreamEncoder(encoding);
    reply.raw.end(Buffer.concat([encoder.start(body), encoder.end() ?? Buffer.alloc(0)]));
  }
}

export function formatOf(value: string | undefined): FormatName {
  if (value === undefined) return 'jsonld';
  if (!isFormatName(value)) {
    throw new PublisherError('PUB_ERR_UNKNOWN_FORMAT', `format must be one of ${formatNames.join(', ')}`, {
      formats: formatNames,
    });
  }
  return value;
}

export function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
