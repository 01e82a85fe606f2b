import type { Quad } from '@rdfjs/types';
import { DataFactory } from 'n3';
import { solidNotifications, STREAMS_PATH } from '@rdf-stream/protocol';

const { namedNode, quad } = DataFactory;

const NOTIFY = solidNotifications.vocabulary;
const { path, servicePaths } = solidNotifications;
export const EVENT_SOURCE_CHANNEL = solidNotifications.channelTypes.eventSource;
export const WEB_SOCKET_CHANNEL = solidNotifications.channelTypes.webSocket;

/** The channel types offered, one subscription service each. */
export type ChannelType = typeof EVENT_SOURCE_CHANNEL | typeof WEB_SOCKET_CHANNEL;

/** The channel features the subscription service honours. */
export const notificationFeatures = ['state', 'endAt', 'rate'] as const;

/** Where the Solid notification resources of a publisher live. */
export const subscriptionServiceLinks = (baseUrl: string) => ({
  /** The description resource (`rel=storageDescription` from every stream). */
  description: `${baseUrl}${path}`,
  /** `POST` here to subscribe (EventSourceChannel2023); `GET` describes it. */
  service: `${baseUrl}${servicePaths.eventSource}`,
  /** A channel's `receiveFrom` (and `id`): the service followed by the channel's secret. */
  channel: (channelId: string) => `${baseUrl}${servicePaths.eventSource}/${channelId}`,
  /** `POST` here to subscribe (WebSocketChannel2023); `GET` describes it. */
  webSocketService: `${baseUrl}${servicePaths.webSocket}`,
  /** A WebSocket channel's `receiveFrom`: a `ws:` (or `wss:`) URL, the service's followed by the channel's secret. */
  webSocketChannel: (channelId: string) => `${baseUrl.replace(/^http/, 'ws')}${servicePaths.webSocket}/${channelId}`,
});

/** A stream IRI is `{base}/streams/{id}` (see `streamIri`): its publisher's base URL. */
export const baseUrlOfStream = (streamIri: string) => streamIri.slice(0, streamIri.lastIndexOf(`${STREAMS_PATH}/`));

/**
 * `<subject> notify:subscription <service>` and the service's channel type and features: the
 * triples a client follows to find where to subscribe (Solid Notifications Protocol, discovery).
 */
export function subscriptionServiceQuads(subject: string, service: string, channelType: ChannelType = EVENT_SOURCE_CHANNEL): Quad[] {
  const serviceNode = namedNode(service);
  return [
    quad(namedNode(subject), namedNode(`${NOTIFY}subscription`), serviceNode),
    quad(serviceNode, namedNode(`${NOTIFY}channelType`), namedNode(`${NOTIFY}${channelType}`)),
    ...notificationFeatures.map((feature) => quad(serviceNode, namedNode(`${NOTIFY}feature`), namedNode(`${NOTIFY}${feature}`))),
  ];
}

/** Both subscription services of a publisher, as `subscriptionServiceQuads` of `subject`. */
export function allSubscriptionServiceQuads(subject: string, baseUrl: string): Quad[] {
  const links = subscriptionServiceLinks(baseUrl);
  return [...subscriptionServiceQuads(subject, links.service, EVENT_SOURCE_CHANNEL), ...subscriptionServiceQuads(subject, links.webSocketService, WEB_SOCKET_CHANNEL)];
}
