import { echoed, PublisherError } from '../../errors.js';
import { parseDayTimeDuration } from '@rdf-stream/protocol';
import { type ChannelType, EVENT_SOURCE_CHANNEL, NOTIFICATION_CONTEXT, NOTIFY } from './service-description.js';

/** What a topic IRI names: a stream (each element is an `Add`) or its `/latest` (an `Update`). */
export interface NotificationTopic {
  readonly iri: string;
  readonly streamId: string;
  readonly kind: 'stream' | 'latest';
}

/** A subscription request that passed validation, with the server's choices applied. */
export interface SubscriptionRequest {
  readonly topic: NotificationTopic;
  /** The receiver's state of the topic (`notify:state`), if it sent one. */
  readonly state?: string;
  /** When the channel ends (milliseconds since the epoch): `endAt`, capped by the channel lifetime. */
  readonly endAtMs: number;
  /** Least milliseconds between two notifications (`notify:rate`), if asked. */
  readonly rateMs?: number;
}

export interface SubscriptionRequestContext {
  /** The topic `iri` names on this publisher, or undefined. */
  readonly resolveTopic: (iri: string) => NotificationTopic | undefined;
  readonly nowMs: number;
  /** Longest life of a channel (milliseconds): `notificationChannelTtlSeconds`. */
  readonly maxLifetimeMs: number;
  /** The channel type of the service the request was sent to (default EventSourceChannel2023). */
  readonly channelType?: ChannelType;
}

/** The spellings of a channel type's `type`: its term, its compact IRI, its IRI. */
const channelTypeNames = (channelType: ChannelType) => new Set([channelType, `notify:${channelType}`, `${NOTIFY}${channelType}`]);
const knownKeys = new Set(['@context', 'type', 'topic', 'state', 'endAt', 'rate']);
/** Features of the protocol this service does not offer: named in the answer, not silently dropped. */
const unsupportedFeatures = new Set(['startAt', 'accept', 'sendTo', 'sender']);
const dateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;
const MAX_STATE_CHARS = 256;

const invalid = (detail: string, member?: string) =>
  new PublisherError('PUB_ERR_NOTIFICATION_INVALID', detail, member === undefined ? {} : { member });

/**
 * Validates a subscription request body (JSON already parsed) against the EventSourceChannel2023
 * and WebSocketChannel2023 rules (the same members; `type` must be the service's): `type` and `topic` required, `state`, `endAt`, `rate` optional. The body is read as
 * compacted against the Solid notification context, so any other `@context` is refused rather
 * than misread (JSON-LD is not expanded). Throws a `PublisherError` (422, or 400 for a body that
 * is not a JSON object) naming the member at fault.
 */
export function parseSubscriptionRequest(body: unknown, context: SubscriptionRequestContext): SubscriptionRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new PublisherError('PUB_ERR_NOTIFICATION_BAD_REQUEST', 'The subscription request must be a JSON-LD object');
  }
  const request = body as Record<string, unknown>;
  for (const key of Object.keys(request)) {
    if (unsupportedFeatures.has(key)) throw invalid(`The feature "${key}" is not offered; supported: state, endAt, rate`, key);
    if (!knownKeys.has(key)) throw invalid(`Unknown member "${echoed(key)}"`, echoed(key));
  }
  const declared = request['@context'];
  if (declared !== undefined) {
    const contexts = Array.isArray(declared) ? declared : [declared];
    if (!contexts.includes(NOTIFICATION_CONTEXT) || !contexts.every((entry) => typeof entry === 'string')) {
      throw invalid(`@context must name ${NOTIFICATION_CONTEXT}`, '@context');
    }
  }
  const type = request.type;
  const channelType = context.channelType ?? EVENT_SOURCE_CHANNEL;
  if (typeof type !== 'string' || !channelTypeNames(channelType).has(type)) {
    throw new PublisherError('PUB_ERR_NOTIFICATION_UNSUPPORTED_TYPE', `type must be ${channelType}`, {
      member: 'type',
      supported: [channelType],
    });
  }
  if (typeof request.topic !== 'string' || request.topic === '') throw invalid('topic must be the IRI of a stream or of its /latest', 'topic');
  const topic = context.resolveTopic(request.topic);
  if (topic === undefined) {
    throw new PublisherError('PUB_ERR_NOTIFICATION_UNKNOWN_TOPIC', `No stream of this publisher is at ${echoed(request.topic)}`, { member: 'topic' });
  }

  let state: string | undefined;
  if (request.state !== undefined) {
    if (typeof request.state !== 'string' || request.state.length > MAX_STATE_CHARS) {
      throw invalid(`state must be a string of at most ${MAX_STATE_CHARS} characters`, 'state');
    }
    state = request.state;
  }
  let endAtMs = context.nowMs + context.maxLifetimeMs;
  if (request.endAt !== undefined) {
    const requested = typeof request.endAt === 'string' && dateTime.test(request.endAt) ? Date.parse(request.endAt) : Number.NaN;
    if (Number.isNaN(requested)) throw invalid('endAt must be an xsd:dateTime with a time zone, e.g. 2030-01-01T12:00:00Z', 'endAt');
    if (requested <= context.nowMs) throw invalid('endAt is in the past', 'endAt');
    endAtMs = Math.min(endAtMs, requested);
  }
  let rateMs: number | undefined;
  if (request.rate !== undefined) {
    rateMs = typeof request.rate === 'string' ? parseDayTimeDuration(request.rate) : undefined;
    if (rateMs === undefined) throw invalid('rate must be an xsd:duration in days, hours, minutes and seconds, e.g. PT10S', 'rate');
  }
  return {
    topic,
    endAtMs,
    ...(state === undefined ? {} : { state }),
    ...(rateMs === undefined || rateMs === 0 ? {} : { rateMs }),
  };
}
