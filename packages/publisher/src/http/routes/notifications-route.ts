import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type {} from '@fastify/websocket';
import type { WebSocket } from 'ws';
import { PublisherError } from '../../errors.js';
import { streamIri } from '../../model/stream-element.js';
import { ns } from '../../model/vocabulary.js';
import { formatDuration } from '@rdf-stream/protocol';
import type { NotificationChannel, NotificationChannels } from '../../publish/notifications/notification-channels.js';
import { type NotificationTopic, parseSubscriptionRequest } from '../../publish/notifications/notification-request.js';
import {
  allSubscriptionServiceQuads,
  type ChannelType,
  EVENT_SOURCE_CHANNEL,
  NOTIFICATION_CONTEXT,
  NOTIFY,
  subscriptionServiceLinks,
  WEB_SOCKET_CHANNEL,
} from '../../publish/notifications/service-description.js';
import { sseFrame } from '../../render/sse-frame.js';
import { streamHeaders } from '../sse-headers-and-retries.js';
import { closeForShutdown, closeShed, refuseClientMessages, WebSocketConnection } from '../websocket-sink.js';
import { renderStaticDocument } from '../../render/static-document.js';
import type { AppContext } from '../app-context.js';
import { sendStaticDocument } from '../static-document-reply.js';

const SERVICE_PATH = '/notifications/eventsource';
const WEB_SOCKET_SERVICE_PATH = '/notifications/websocket';
/** Requests that arrived while the process was under pressure (marked by under-pressure's hook). */
const arrivedUnderPressure = new WeakSet<FastifyRequest>();

/**
 * Solid notifications, EventSourceChannel2023 and WebSocketChannel2023: the description resource
 * (`GET /notifications`, linked from every stream as its `storageDescription`), one subscription
 * service per channel type (`POST /notifications/eventsource`, `POST /notifications/websocket`)
 * and each channel's `receiveFrom`: `GET /notifications/eventsource/{channel}`, an SSE stream of
 * Activity Streams notifications, or `ws://…/notifications/websocket/{channel}`, a WebSocket
 * carrying each notification as one text message (as the Community Solid Server does).
 */
export function notificationsRoute(app: FastifyInstance, context: AppContext): void {
  const { config } = context;
  const links = subscriptionServiceLinks(config.baseUrl);
  const channels = context.notifications;

  const description = renderStaticDocument(allSubscriptionServiceQuads(links.description, config.baseUrl), context.jsonLd, {
    notify: NOTIFY,
    xsd: ns.xsd,
  });
  const describe = (request: FastifyRequest, reply: FastifyReply) => sendStaticDocument(request, reply, description, context.negotiation);
  app.get('/notifications', describe);
  app.get(SERVICE_PATH, describe);
  app.get(WEB_SOCKET_SERVICE_PATH, describe);

  acceptJsonBodies(app, config.notificationSubscriptionMaxBodyBytes);

  app.post(SERVICE_PATH, subscriptionHandler(context, channels, EVENT_SOURCE_CHANNEL, links.channel));
  app.post(WEB_SOCKET_SERVICE_PATH, subscriptionHandler(context, channels, WEB_SOCKET_CHANNEL, links.webSocketChannel));

  eventSourceReceiver(app, context, channels);
  webSocketReceiver(app, context, channels);
}

/**
 * JSON-LD bodies are read as JSON against the notification context (see
 * `parseSubscriptionRequest`); any other Content-Type is answered 415 by Fastify.
 */
function acceptJsonBodies(app: FastifyInstance, maxBodyBytes: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    ['application/ld+json', 'application/json'],
    { parseAs: 'string', bodyLimit: maxBodyBytes },
    (_request, body, done) => {
      try {
        done(null, JSON.parse(body as string));
      } catch {
        done(new PublisherError('PUB_ERR_NOTIFICATION_BAD_REQUEST', 'The body is not valid JSON'), undefined);
      }
    },
  );
}

/** `POST` to a subscription service: opens a channel on the requested topic and describes it. */
function subscriptionHandler(context: AppContext, channels: NotificationChannels, channelType: ChannelType, receiveFrom: (channelId: string) => string) {
  const { config } = context;
  return (request: FastifyRequest, reply: FastifyReply) => {
    const subscription = parseSubscriptionRequest(request.body, {
      resolveTopic: (iri) => topicOf(context, iri),
      nowMs: Date.now(),
      maxLifetimeMs: config.notificationChannelTtlSeconds * 1000,
      channelType,
    });
    const channel = channels.open(subscription, channelType);
    if (channel === undefined) {
      throw new PublisherError(
        'PUB_ERR_NOTIFICATION_CHANNELS_FULL',
        `${config.maxNotificationChannels} channels are open`,
        { limit: config.maxNotificationChannels },
        { 'retry-after': String(config.pressureRetryAfterSeconds) },
      );
    }
    return reply
      .code(200)
      .headers({ 'content-type': 'application/ld+json', 'cache-control': 'no-store' })
      .send(JSON.stringify(channelDocument(channel, receiveFrom(channel.id), subscription.state)));
  };
}

/** An EventSourceChannel2023's receiveFrom: an SSE stream of the channel's notifications. */
function eventSourceReceiver(app: FastifyInstance, context: AppContext, channels: NotificationChannels): void {
  const { config } = context;
  app.get<{ Params: { channel: string } }>(
    `${SERVICE_PATH}/:channel`,
    { config: { pressureHandler: (request: FastifyRequest) => void arrivedUnderPressure.add(request) } },
    (request, reply) => {
      if (channels.get(request.params.channel)?.channelType !== EVENT_SOURCE_CHANNEL) throw channelNotFound();
      reply.hijack();
      reply.raw.writeHead(200, streamHeaders(reply));
      if (arrivedUnderPressure.has(request)) {
        // An EventSource gives up on any non-200 answer: tell it to come back later instead.
        reply.raw.end(sseFrame({ retry: config.pressureRetryAfterSeconds * 1000, comment: 'overloaded' }));
        return;
      }
      reply.raw.write(sseFrame({ comment: 'ok', retry: config.sseRetryMs }));
      const lastEventId = request.headers['last-event-id'];
      channels.connect(request.params.channel, reply.raw, typeof lastEventId === 'string' && lastEventId !== '' ? lastEventId : undefined);
    },
  );
}

/**
 * A WebSocketChannel2023's receiveFrom: the channel is checked before the upgrade (404), a
 * plain GET is 426; the receiver sends nothing (a data message is closed 1008, as on /ws).
 */
function webSocketReceiver(app: FastifyInstance, context: AppContext, channels: NotificationChannels): void {
  const { config } = context;
  app.route<{ Params: { channel: string } }>({
    method: 'GET',
    url: `${WEB_SOCKET_SERVICE_PATH}/:channel`,
    config: { pressureHandler: (request: FastifyRequest) => void arrivedUnderPressure.add(request) },
    preHandler: (request, _reply, done) => {
      done(channels.get(request.params.channel)?.channelType === WEB_SOCKET_CHANNEL ? undefined : channelNotFound());
    },
    handler: () => {
      throw new PublisherError('PUB_ERR_UPGRADE_REQUIRED', 'Open receiveFrom with a WebSocket client', {}, { upgrade: 'websocket', connection: 'Upgrade' });
    },
    wsHandler: (socket: WebSocket, request) => {
      refuseClientMessages(socket);
      if (context.lifecycle.closing) return closeForShutdown(socket, config);
      if (arrivedUnderPressure.has(request)) return closeShed(socket, config.sseRetryMs, config.pressureRetryAfterSeconds * 1000);
      // The channel may have ended during the handshake: say so as the 404 would have.
      if (!channels.connect(request.params.channel, new WebSocketConnection(socket))) socket.close(1000, 'PUB_ERR_NOTIFICATION_CHANNEL_NOT_FOUND');
    },
  });
}

const channelNotFound = () =>
  new PublisherError('PUB_ERR_NOTIFICATION_CHANNEL_NOT_FOUND', 'The channel ended (endAt), or never existed: subscribe again');

/** The topic an IRI names: `{base}/streams/{id}` or `{base}/streams/{id}/latest` of a configured stream. */
function topicOf(context: AppContext, iri: string): NotificationTopic | undefined {
  const prefix = `${context.config.baseUrl}/streams/`;
  if (!iri.startsWith(prefix)) return undefined;
  const [streamId = '', rest, ...extra] = iri.slice(prefix.length).split('/');
  if (!context.hubs.has(streamId) || extra.length > 0) return undefined;
  if (rest === undefined) return { iri: streamIri(context.config.baseUrl, streamId), streamId, kind: 'stream' };
  return rest === 'latest' ? { iri, streamId, kind: 'latest' } : undefined;
}

/** The channel as the subscription answer describes it: the request's features, with the server's choices. */
function channelDocument(channel: NotificationChannel, receiveFrom: string, state: string | undefined): Record<string, unknown> {
  return {
    '@context': [NOTIFICATION_CONTEXT],
    id: receiveFrom,
    type: channel.channelType,
    topic: channel.topic.iri,
    receiveFrom,
    ...(state === undefined ? {} : { state }),
    endAt: new Date(channel.endAtMs).toISOString(),
    ...(channel.rateMs === undefined ? {} : { rate: formatDuration(channel.rateMs) }),
  };
}
