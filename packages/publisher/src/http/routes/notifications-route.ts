import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type {} from '@fastify/websocket';
import type { WebSocket } from 'ws';
import { PublisherError } from '../../errors.js';
import { ns } from '../../model/vocabulary.js';
import { formatDuration, matchStreamPath, solidNotifications, streamIri } from '@rdf-stream/protocol';
import { ChannelStoreUnavailableError } from '../../publish/notifications/channel-store.js';
import type { NotificationChannel, NotificationChannels } from '../../publish/notifications/notification-channels.js';
import { type NotificationTopic, parseSubscriptionRequest } from '../../publish/notifications/notification-request.js';
import {
  allSubscriptionServiceQuads,
  type ChannelType,
  EVENT_SOURCE_CHANNEL,
  subscriptionServiceLinks,
  WEB_SOCKET_CHANNEL,
} from '../../publish/notifications/service-description.js';
import { sseFrame } from '../../render/sse-frame.js';
import { streamHeaders } from '../sse-headers-and-retries.js';
import { closeForShutdown, closeShed, refuseClientMessages, WebSocketConnection } from '../websocket-sink.js';
import { renderStaticDocument } from '../../render/static-document.js';
import type { AppContext } from '../app-context.js';
import { sendStaticDocument } from '../static-document-reply.js';

const SERVICE_PATH = solidNotifications.servicePaths.eventSource;
const WEB_SOCKET_SERVICE_PATH = solidNotifications.servicePaths.webSocket;
/** Requests that arrived while the process was under pressure (marked by under-pressure's hook). */
const arrivedUnderPressure = new WeakSet<FastifyRequest>();
/** A WebSocket receiver's channel, read before the upgrade, handed to the connection after it. */
const channelOfUpgrade = new WeakMap<FastifyRequest, NotificationChannel>();

/**
 * Solid notifications, EventSourceChannel2023 and WebSocketChannel2023: the description resource
 * (`GET /notifications`, linked from every stream as its `storageDescription`), one subscription
 * service per channel type (`POST /notifications/eventsource`, `POST /notifications/websocket`)
 * and each channel's `receiveFrom`: `GET /notifications/eventsource/{channel}`, an SSE stream of
 * Activity Streams notifications, or `ws://…/notifications/websocket/{channel}`, a WebSocket
 * carrying each notification as one text message (as the Community Solid Server does).
 * `DELETE` on a channel's id unsubscribes (as on the Community Solid Server).
 */
export function notificationsRoute(app: FastifyInstance, context: AppContext): void {
  const { config } = context;
  const links = subscriptionServiceLinks(config.baseUrl);
  const channels = context.notifications;

  const description = renderStaticDocument(allSubscriptionServiceQuads(links.description, config.baseUrl), context.jsonLd, {
    notify: solidNotifications.vocabulary,
    xsd: ns.xsd,
  });
  const describe = (request: FastifyRequest, reply: FastifyReply) => sendStaticDocument(request, reply, description, context.negotiation);
  app.get(solidNotifications.path, describe);
  app.get(SERVICE_PATH, describe);
  app.get(WEB_SOCKET_SERVICE_PATH, describe);

  acceptJsonBodies(app, config.notificationSubscriptionMaxBodyBytes);

  app.post(SERVICE_PATH, subscriptionHandler(context, channels, EVENT_SOURCE_CHANNEL, links.channel));
  app.post(WEB_SOCKET_SERVICE_PATH, subscriptionHandler(context, channels, WEB_SOCKET_CHANNEL, links.webSocketChannel));

  eventSourceReceiver(app, context, channels);
  webSocketReceiver(app, context, channels);
  unsubscription(app, context, channels, SERVICE_PATH, EVENT_SOURCE_CHANNEL);
  unsubscription(app, context, channels, WEB_SOCKET_SERVICE_PATH, WEB_SOCKET_CHANNEL);
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
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const subscription = parseSubscriptionRequest(request.body, {
      resolveTopic: (iri) => topicOf(context, iri),
      nowMs: Date.now(),
      maxLifetimeMs: config.notificationChannelTtlSeconds * 1000,
      channelType,
    });
    const channel = await channels.open(subscription, channelType).catch(storeUnavailable(context, request.log));
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

/**
 * An EventSourceChannel2023's receiveFrom: an SSE stream of the channel's notifications. When the
 * channel store cannot be reached, or the publisher is under pressure or closing, the answer is a
 * `retry:` and the end of the stream, so that the EventSource comes back (it gives up on any
 * non-200 answer).
 */
function eventSourceReceiver(app: FastifyInstance, context: AppContext, channels: NotificationChannels): void {
  const { config } = context;
  const comeBackLater = (reply: FastifyReply, comment: string) => {
    reply.hijack();
    reply.raw.writeHead(200, streamHeaders(reply));
    reply.raw.end(sseFrame({ retry: config.pressureRetryAfterSeconds * 1000, comment }));
  };
  app.get<{ Params: { channel: string } }>(
    `${SERVICE_PATH}/:channel`,
    { config: { pressureHandler: (request: FastifyRequest) => void arrivedUnderPressure.add(request) } },
    async (request, reply) => {
      let channel: NotificationChannel | undefined;
      try {
        channel = await channels.get(request.params.channel);
      } catch (error) {
        if (!(error instanceof ChannelStoreUnavailableError)) throw error;
        request.log.warn({ err: error.cause ?? error }, 'notification channel store unavailable');
        return comeBackLater(reply, 'channel store unavailable');
      }
      if (channel?.channelType !== EVENT_SOURCE_CHANNEL) throw channelNotFound();
      if (arrivedUnderPressure.has(request)) return comeBackLater(reply, 'overloaded');
      if (context.lifecycle.closing) return comeBackLater(reply, 'shutting down');
      reply.hijack();
      reply.raw.writeHead(200, streamHeaders(reply));
      reply.raw.write(sseFrame({ comment: 'ok', retry: config.sseRetryMs }));
      const lastEventId = request.headers['last-event-id'];
      // The channel may have ended while it was read: end the stream, and the reconnection is 404.
      if (!channels.connect(channel, reply.raw, typeof lastEventId === 'string' && lastEventId !== '' ? lastEventId : undefined)) reply.raw.end();
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
    preHandler: async (request) => {
      const channel = await channels.get(request.params.channel).catch(storeUnavailable(context, request.log));
      if (channel?.channelType !== WEB_SOCKET_CHANNEL) throw channelNotFound();
      channelOfUpgrade.set(request, channel);
    },
    handler: () => {
      throw new PublisherError('PUB_ERR_UPGRADE_REQUIRED', 'Open receiveFrom with a WebSocket client', {}, { upgrade: 'websocket', connection: 'Upgrade' });
    },
    wsHandler: (socket: WebSocket, request) => {
      refuseClientMessages(socket);
      if (context.lifecycle.closing) return closeForShutdown(socket, config);
      if (arrivedUnderPressure.has(request)) return closeShed(socket, config.sseRetryMs, config.pressureRetryAfterSeconds * 1000);
      // The channel may have ended during the handshake: say so as the 404 would have.
      const channel = channelOfUpgrade.get(request);
      if (channel === undefined || !channels.connect(channel, new WebSocketConnection(socket))) socket.close(1000, 'PUB_ERR_NOTIFICATION_CHANNEL_NOT_FOUND');
    },
  });
}

/**
 * `DELETE` on a channel's id (its `receiveFrom`, over HTTP for a WebSocket channel): the channel
 * is forgotten by every instance that shares the store; 204, or 404 for an unknown channel or
 * one of the other channel type.
 */
function unsubscription(app: FastifyInstance, context: AppContext, channels: NotificationChannels, servicePath: string, channelType: ChannelType): void {
  app.delete<{ Params: { channel: string } }>(`${servicePath}/:channel`, async (request, reply) => {
    const unavailable = storeUnavailable(context, request.log);
    const channel = await channels.get(request.params.channel).catch(unavailable);
    if (channel?.channelType !== channelType) throw channelNotFound();
    await channels.delete(channel.id).catch(unavailable);
    return reply.code(204).header('cache-control', 'no-store').send();
  });
}

/** A channel store that cannot be reached: 503 with `Retry-After`; its cause goes to the log, not to the client. */
function storeUnavailable(context: AppContext, log: FastifyBaseLogger) {
  return (error: unknown): never => {
    if (!(error instanceof ChannelStoreUnavailableError)) throw error;
    log.warn({ err: error.cause ?? error }, 'notification channel store unavailable');
    throw new PublisherError(
      'PUB_ERR_NOTIFICATION_STORE_UNAVAILABLE',
      'The notification channels cannot be reached at the moment',
      {},
      { 'retry-after': String(context.config.pressureRetryAfterSeconds) },
    );
  };
}

const channelNotFound = () =>
  new PublisherError('PUB_ERR_NOTIFICATION_CHANNEL_NOT_FOUND', 'The channel ended (endAt), was deleted, or never existed: subscribe again');

/** The topic an IRI names: `{base}/streams/{id}` or `{base}/streams/{id}/latest` of a configured stream. */
function topicOf(context: AppContext, iri: string): NotificationTopic | undefined {
  const base = context.config.baseUrl;
  const path = iri.startsWith(`${base}/`) ? matchStreamPath(iri.slice(base.length)) : undefined;
  if (path === undefined || path.query !== undefined || !context.hubs.has(path.streamId)) return undefined;
  if (path.resource === undefined) return { iri: streamIri(base, path.streamId), streamId: path.streamId, kind: 'stream' };
  return path.resource === 'latest' ? { iri, streamId: path.streamId, kind: 'latest' } : undefined;
}

/** The channel as the subscription answer describes it: the request's features, with the server's choices. */
function channelDocument(channel: NotificationChannel, receiveFrom: string, state: string | undefined): Record<string, unknown> {
  return {
    '@context': [solidNotifications.context],
    id: receiveFrom,
    type: channel.channelType,
    topic: channel.topic.iri,
    receiveFrom,
    ...(state === undefined ? {} : { state }),
    endAt: new Date(channel.endAtMs).toISOString(),
    ...(channel.rateMs === undefined ? {} : { rate: formatDuration(channel.rateMs) }),
  };
}
