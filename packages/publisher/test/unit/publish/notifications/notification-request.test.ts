import { describe, expect, it } from 'vitest';
import type { PublisherError } from '../../../../src/errors.js';
import { parseSubscriptionRequest, type SubscriptionRequestContext } from '../../../../src/publish/notifications/notification-request.js';

const topic = 'https://pub.example/streams/parking';
const context: SubscriptionRequestContext = {
  resolveTopic: (iri) => (iri === topic ? { iri, streamId: 'parking', kind: 'stream' } : undefined),
  nowMs: Date.parse('2030-01-01T00:00:00Z'),
  maxLifetimeMs: 3_600_000,
};
const body = (extra: Record<string, unknown> = {}) => ({
  '@context': ['https://www.w3.org/ns/solid/notification/v1'],
  type: 'EventSourceChannel2023',
  topic,
  ...extra,
});
const codeOf = (value: unknown) => {
  try {
    parseSubscriptionRequest(value, context);
  } catch (error) {
    return [(error as PublisherError).code, (error as PublisherError).extensions.member];
  }
  return undefined;
};

describe('parseSubscriptionRequest', () => {
  it("takes the type of the service it was sent to: WebSocketChannel2023 at the WebSocket one, in each spelling, and no other", () => {
    const webSocket = { ...context, channelType: 'WebSocketChannel2023' as const };
    for (const type of ['WebSocketChannel2023', 'notify:WebSocketChannel2023', 'http://www.w3.org/ns/solid/notifications#WebSocketChannel2023']) {
      expect(parseSubscriptionRequest(body({ type }), webSocket).topic.iri).toBe(topic);
    }
    expect(() => parseSubscriptionRequest(body(), webSocket)).toThrow(/type must be WebSocketChannel2023/);
    expect(codeOf(body({ type: 'WebSocketChannel2023' }))).toEqual(['PUB_ERR_NOTIFICATION_UNSUPPORTED_TYPE', 'type']);
  });

  it('accepts the spec example, capping endAt by the channel lifetime', () => {
    expect(parseSubscriptionRequest(body({ state: 'opaque-state', endAt: '2031-01-11T12:37:15Z', rate: 'PT10s' }), context)).toEqual({
      topic: { iri: topic, streamId: 'parking', kind: 'stream' },
      state: 'opaque-state',
      endAtMs: context.nowMs + context.maxLifetimeMs,
      rateMs: 10_000,
    });
  });

  it('keeps an endAt within the lifetime, and accepts the type as a full IRI without @context', () => {
    const request = parseSubscriptionRequest(
      { type: 'http://www.w3.org/ns/solid/notifications#EventSourceChannel2023', topic, endAt: '2030-01-01T00:30:00.500+00:00' },
      context,
    );
    expect(request.endAtMs).toBe(context.nowMs + 1_800_500);
  });

  it.each([
    ['not an object', [], ['PUB_ERR_NOTIFICATION_BAD_REQUEST', undefined]],
    ['null', null, ['PUB_ERR_NOTIFICATION_BAD_REQUEST', undefined]],
    ['another channel type', body({ type: 'WebSocketChannel2023' }), ['PUB_ERR_NOTIFICATION_UNSUPPORTED_TYPE', 'type']],
    ['no type', { topic }, ['PUB_ERR_NOTIFICATION_UNSUPPORTED_TYPE', 'type']],
    ['no topic', body({ topic: undefined }), ['PUB_ERR_NOTIFICATION_INVALID', 'topic']],
    ['a foreign topic', body({ topic: 'https://other.example/x' }), ['PUB_ERR_NOTIFICATION_UNKNOWN_TOPIC', 'topic']],
    ['another @context', body({ '@context': 'https://schema.org/' }), ['PUB_ERR_NOTIFICATION_INVALID', '@context']],
    ['an endAt without time zone', body({ endAt: '2030-01-01T01:00:00' }), ['PUB_ERR_NOTIFICATION_INVALID', 'endAt']],
    ['an endAt in the past', body({ endAt: '2029-12-31T23:59:59Z' }), ['PUB_ERR_NOTIFICATION_INVALID', 'endAt']],
    ['a rate in months', body({ rate: 'P1M' }), ['PUB_ERR_NOTIFICATION_INVALID', 'rate']],
    ['a rate that is a number', body({ rate: 10 }), ['PUB_ERR_NOTIFICATION_INVALID', 'rate']],
    ['a state that is not a string', body({ state: 3 }), ['PUB_ERR_NOTIFICATION_INVALID', 'state']],
    ['an unsupported feature', body({ startAt: '2030-01-02T00:00:00Z' }), ['PUB_ERR_NOTIFICATION_INVALID', 'startAt']],
    ['an unknown member', body({ sendTo: 'https://x.example/' }), ['PUB_ERR_NOTIFICATION_INVALID', 'sendTo']],
    ['a __proto__ member', JSON.parse('{"__proto__":{},"type":"EventSourceChannel2023"}'), ['PUB_ERR_NOTIFICATION_INVALID', '__proto__']],
  ])('refuses %s', (_name, value, expected) => {
    expect(codeOf(value)).toEqual(expected);
  });
});
