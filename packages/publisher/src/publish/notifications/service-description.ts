import type { Quad } from '@rdfjs/types';
import { DataFactory } from 'n3';

const { namedNode, quad } = DataFactory;

/** The Solid Notifications vocabulary (https://www.w3.org/ns/solid/notifications). */
export const NOTIFY = 'http://www.w3.org/ns/solid/notifications#';
/** The JSON-LD context of subscription requests, channels and notifications. */
export const NOTIFICATION_CONTEXT = 'https://www.w3.org/ns/solid/notification/v1';
/** `Link` relation to the description resource that lists the subscription services. */
export const STORAGE_DESCRIPTION_REL = 'http://www.w3.org/ns/solid/terms#storageDescription';
export const EVENT_SOURCE_CHANNEL = 'EventSourceChannel2023';
export const WEB_SOCKET_CHANNEL = 'WebSocketChannel2023';

/** The channel types offered, one subscription service each. */
export type ChannelType = typeof EVENT_SOURCE_CHANNEL | typeof WEB_SOCKET_CHANNEL;

/** The channel features the subscription service honours. */
export const notificationFeatures = ['state', 'endAt', 'rate'] as const;

/** Where the Solid notification resources of a publisher live. */
export const subscriptionServiceLinks = (baseUrl: string) => ({
  /** The description resource (`rel=storageDescription` from every stream). */
  description: `${baseUrl}/notifications`,
  /** `POST` here to subscribe (EventSourceChannel2023); `GET` describes it. */
  service: `${baseUrl}/notifications/eventsource`,
  /** A channel's `receiveFrom` (and `id`): the service followed by the channel's secret. */
  channel: (channelId: string) => `${baseUrl}/notifications/eventsource/${channelId}`,
  /** `POST` here to subscribe (WebSocketChannel2023); `GET` describes it. */
  webSocketService: `${baseUrl}/notifications/websocket`,
  /** A WebSocket channel's `receiveFrom`: a `ws:` (or `wss:`) URL, the service's followed by the channel's secret. */
  webSocketChannel: (channelId: string) => `${baseUrl.replace(/^http/, 'ws')}/notifications/websocket/${channelId}`,
});

/** A stream IRI is `{base}/streams/{id}` (see `streamIri`): its publisher's base URL. */
export const baseUrlOfStream = (streamIri: string) => streamIri.slice(0, streamIri.lastIndexOf('/streams/'));

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
