import type { FastifyInstance, FastifyRequest } from 'fastify';
import type {} from '@fastify/websocket';
import type { WebSocket } from 'ws';
import { formatNames, isFormatName } from '@rdf-stream/protocol';
import { PublisherError } from '../../errors.js';
import type { Feed } from '../../publish/sse/element-patches.js';
import { parseEventId, type RequestedEventId, selectResume } from '../../publish/sse/resume.js';
import type { StreamHub } from '../../publish/stream-hub.js';
import { type AppContext, hubOf } from '../app-context.js';
import { originAllowed } from '../cors-policy.js';
import { closeForShutdown, closeShed, refuseClientMessages, WebSocketConnection } from '../websocket-sink.js';
import { first, formatOf } from './events-route.js';

/** The route of the data WebSocket. */
export const WEBSOCKET_ROUTE = '/streams/:id/ws';

interface WebSocketRequest {
  Params: { id: string };
  /** Repeated parameters arrive as arrays: the first value counts. */
  Querystring: { format?: string | string[]; lastEventId?: string | string[] };
}

/** What the checks before the upgrade found: the stream, the format (or `patch`), the id to resume after. */
interface Checked {
  readonly hub: StreamHub;
  readonly format: Feed;
  readonly lastEventId: RequestedEventId | undefined;
}

/** What `?format=` may name: the RDF formats, and `patch`. */
const webSocketFeeds: readonly Feed[] = Object.freeze([...formatNames, 'patch'] as const);

const checkedRequests = new WeakMap<FastifyRequest, Checked>();
/** Requests that arrived while the process was under pressure (marked by under-pressure's hook). */
const arrivedUnderPressure = new WeakSet<FastifyRequest>();

/**
 * `GET /streams/:id/ws`: the data WebSocket (docs/protocol.md). Every check that can fail is
 * made before the upgrade, as an HTTP answer (problem+json): the origin (the CORS policy, 403),
 * the stream (404), `?format=` (400; an RDF format, or `patch`) and `?lastEventId=` (400). Once upgraded, the socket is
 * handed to the stream's broadcaster like an SSE subscriber's, with the same catch-up, limits
 * and shutdown; a plain GET is answered 426.
 *
 * A connection that cannot be taken now (load shedding, `maxSubscribers`, shutdown) is accepted
 * and closed at once with a code and the delay to come back after, jittered as SSE's `retry:`:
 * a browser's WebSocket cannot read an HTTP status.
 */
export function webSocketRoute(app: FastifyInstance, context: AppContext, shedding: () => boolean): void {
  const { config } = context;
  const allowed = originAllowed(config.corsIngestOrigins);

  app.route<WebSocketRequest>({
    method: 'GET',
    url: WEBSOCKET_ROUTE,
    config: {
      pressureHandler: (request: FastifyRequest) => {
        arrivedUnderPressure.add(request);
      },
    },
    preHandler: (request, _reply, done) => {
      try {
        checkedRequests.set(request, check(request));
      } catch (error) {
        done(error as Error);
        return;
      }
      done();
    },
    handler: () => {
      throw new PublisherError('PUB_ERR_UPGRADE_REQUIRED', 'Open this URL with a WebSocket client (RFC 6455)', {}, { upgrade: 'websocket', connection: 'Upgrade' });
    },
    wsHandler: (socket: WebSocket, request) => {
      refuseClientMessages(socket);
      const { hub, format, lastEventId } = checkedRequests.get(request)!;
      if (context.lifecycle.closing) return closeForShutdown(socket, config);
      if (arrivedUnderPressure.has(request) || shedding()) return closeShed(socket, config.sseRetryMs, config.pressureRetryAfterSeconds * 1000);
      if (hub.subscribersFull) return closeShed(socket, config.sseRetryMs, config.sseRetryMs * 2);
      hub.subscribeWebSocket(new WebSocketConnection(socket), format, selectResume(lastEventId, hub.log));
    },
  });

  function check(request: FastifyRequest<WebSocketRequest>): Checked {
    if (!allowed(request)) throw new PublisherError('PUB_ERR_ORIGIN_NOT_ALLOWED', 'This origin may not open the data WebSocket');
    const hub = hubOf(context, request.params.id);
    const format = feedOf(first(request.query.format));
    const lastEventId = parseEventId(first(request.query.lastEventId));
    if (lastEventId === null) {
      throw new PublisherError('PUB_ERR_INVALID_EVENT_ID', 'lastEventId must be an element id ({epoch}-{seq}) sent by this publisher');
    }
    return { hub, format, lastEventId };
  }

  /**
   * `?format=`: an RDF format, or `patch` — each element's RDF Patch, the payload of `/patches`'
   * events (the data WebSocket has no other URL for them; `/events` has `/patches`).
   */
  function feedOf(value: string | undefined): Feed {
    if (value === 'patch') return value;
    if (value !== undefined && !isFormatName(value)) {
      throw new PublisherError('PUB_ERR_UNKNOWN_FORMAT', `format must be one of ${webSocketFeeds.join(', ')}`, { formats: webSocketFeeds });
    }
    return formatOf(value);
  }
}
