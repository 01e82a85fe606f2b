import { EventSource } from 'eventsource';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readProblem } from '../support/problem.js';
import { openWs, UpgradeRefused } from '../support/ws-client.js';
import { startTestPublisher, type TestPublisher } from '../../src/testing.js';

/** For state no event announces: checked every 10 ms, with a deadline for a broken server, not a measure of speed. */
const patience = { timeout: 30_000, interval: 10 };

let running: TestPublisher | undefined;
const sources: EventSource[] = [];
afterEach(async () => {
  for (const source of sources.splice(0)) source.close();
  await running?.close();
  running = undefined;
});

const NOTIFY = 'http://www.w3.org/ns/solid/notifications#';
const CONTEXT = 'https://www.w3.org/ns/solid/notification/v1';
const stream = () => `${running!.url}/streams/parking`;
const id = (seq: number) => `${running!.hub.log.epoch}-${seq}`;
const elementIri = (seq: number) => `${stream()}/elements/${id(seq)}`;

interface Channel {
  id: string;
  type: string;
  topic: string;
  receiveFrom: string;
  state?: string;
  endAt: string;
  rate?: string;
}

/** Subscribes as a Solid app does: a JSON-LD POST to the subscription service. */
function subscribe(body: Record<string, unknown>, contentType = 'application/ld+json'): Promise<Response> {
  return fetch(`${running!.url}/notifications/eventsource`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: JSON.stringify({ '@context': [CONTEXT], type: 'EventSourceChannel2023', ...body }),
  });
}

/** An EventSource on `receiveFrom`, collecting the parsed notifications. */
async function listen(receiveFrom: string) {
  const source = new EventSource(receiveFrom);
  sources.push(source);
  const notifications: Array<Record<string, unknown>> = [];
  const lastEventIds: string[] = [];
  let wake = () => {};
  source.onmessage = (event) => {
    notifications.push(JSON.parse(event.data as string) as Record<string, unknown>);
    lastEventIds.push(event.lastEventId);
    wake();
  };
  await new Promise((resolve, reject) => {
    source.onopen = resolve;
    source.onerror = reject;
  });
  /** Resolves once `count` notifications have arrived. */
  const received = async (count: number) => {
    while (notifications.length < count) await new Promise<void>((resolve) => (wake = resolve));
    return notifications.slice(0, count);
  };
  /** Resolves when the EventSource has given up for good (the server refused a reconnection). */
  const closed = new Promise<void>((resolve) => {
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) resolve();
    };
  });
  return { source, notifications, lastEventIds, received, closed };
}

describe('Solid notifications, EventSourceChannel2023, on a real socket', () => {
  it('is discovered from the stream, subscribed to with fetch, and notifies each new element', async () => {
    running = await startTestPublisher();

    // Discovery: the stream's Link header names the description resource, which names the service.
    const head = await fetch(stream(), { method: 'HEAD' });
    const link = head.headers.get('link') ?? '';
    const described = /<([^>]+)>; rel="http:\/\/www\.w3\.org\/ns\/solid\/terms#storageDescription"/.exec(link);
    expect(described?.[1]).toBe(`${running.url}/notifications`);
    const description = await (await fetch(described![1]!, { headers: { accept: 'text/turtle' } })).text();
    expect(description).toContain(`notify:subscription <${running.url}/notifications/eventsource>`);
    expect(description).toMatch(/notify:channelType notify:EventSourceChannel2023/);
    expect(description).toMatch(/notify:feature notify:state, notify:endAt, notify:rate/);
    // The descriptor says the same about the stream itself.
    const descriptor = await (await fetch(stream(), { headers: { accept: 'application/n-triples' } })).text();
    expect(descriptor).toContain(`<${stream()}> <${NOTIFY}subscription> <${running.url}/notifications/eventsource> .`);

    const answer = await subscribe({ topic: stream() });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/ld\+json(;|$)/);
    const channel = (await answer.json()) as Channel;
    expect(channel).toMatchObject({ '@context': [CONTEXT], type: 'EventSourceChannel2023', topic: stream() });
    expect(channel.receiveFrom).toMatch(new RegExp(`^${running.url}/notifications/eventsource/[A-Za-z0-9_-]{22}$`));
    expect(Date.parse(channel.endAt)).toBeGreaterThan(Date.now());

    const listener = await listen(channel.receiveFrom);
    const times = [new Date(Date.UTC(2030, 0, 1, 0, 0, 1)), new Date(Date.UTC(2030, 0, 1, 0, 0, 2)), new Date(Date.UTC(2030, 0, 1, 0, 0, 3))];
    for (const generatedAt of times) await running.push(undefined, generatedAt);
    const notifications = await listener.received(3);
    expect(notifications).toEqual(
      [1, 2, 3].map((seq) => ({
        '@context': ['https://www.w3.org/ns/activitystreams', CONTEXT],
        id: `urn:rdf-stream:notification:add:${elementIri(seq)}`,
        type: 'Add',
        object: elementIri(seq),
        target: stream(),
        state: id(seq),
        published: times[seq - 1]!.toISOString(),
      })),
    );
    expect(listener.lastEventIds).toEqual([id(1), id(2), id(3)]);
    // The element a notification points at is there to be read.
    expect((await fetch(notifications[2]!.object as string)).status).toBe(200);
  });

  it('notifies /latest as an Update of the topic', async () => {
    running = await startTestPublisher();
    const channel = (await (await subscribe({ topic: `${stream()}/latest` })).json()) as Channel;
    const listener = await listen(channel.receiveFrom);
    await running.push();
    const [notification] = await listener.received(1);
    expect(notification).toMatchObject({ type: 'Update', object: `${stream()}/latest`, target: elementIri(1), state: id(1) });
  });

  it('honours state: a receiver whose state differs is notified of the current one at once', async () => {
    running = await startTestPublisher();
    await running.push();
    await running.push();
    const stale = (await (await subscribe({ topic: stream(), state: id(1) })).json()) as Channel;
    expect(stale.state).toBe(id(1));
    const behind = await listen(stale.receiveFrom);
    expect(await behind.received(1)).toMatchObject([{ object: elementIri(2), state: id(2) }]);

    // A receiver already at the current state hears only of what comes next.
    const current = (await (await subscribe({ topic: stream(), state: id(2) })).json()) as Channel;
    const upToDate = await listen(current.receiveFrom);
    await running.push();
    expect(await upToDate.received(1)).toMatchObject([{ state: id(3) }]);
  });

  it('honours rate: at most one notification per interval, the newest of those held back', async () => {
    running = await startTestPublisher();
    // Three pushes must fall within one interval: 2 s leaves a loaded machine ample margin
    // (at 0.3 s, the second push came after the interval on a busy CI machine).
    const channel = (await (await subscribe({ topic: stream(), rate: 'PT2S' })).json()) as Channel;
    expect(channel.rate).toBe('PT2S');
    const listener = await listen(channel.receiveFrom);
    await running.push();
    await running.push();
    await running.push();
    const notifications = await listener.received(2);
    expect(notifications.map((notification) => notification.state)).toEqual([id(1), id(3)]);
  });

  it('honours endAt: the stream ends then, and the channel is gone', async () => {
    running = await startTestPublisher({ flags: ['--sse-retry-ms', '20'] });
    const endAt = new Date(Date.now() + 300).toISOString();
    const channel = (await (await subscribe({ topic: stream(), endAt })).json()) as Channel;
    expect(channel.endAt).toBe(endAt);
    const listener = await listen(channel.receiveFrom);
    await listener.closed;
    const gone = await fetch(channel.receiveFrom);
    expect(gone.status).toBe(404);
    expect((await readProblem(gone)).code).toBe('PUB_ERR_NOTIFICATION_CHANNEL_NOT_FOUND');
  });

  it('unsubscribes with DELETE on the channel: the stream ends, and the channel is gone', async () => {
    running = await startTestPublisher({ flags: ['--sse-retry-ms', '20'] });
    const channel = (await (await subscribe({ topic: stream() })).json()) as Channel;
    const listener = await listen(channel.receiveFrom);
    const deleted = await fetch(channel.id, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    await listener.closed;
    const again = await fetch(channel.id, { method: 'DELETE' });
    expect([again.status, (await readProblem(again)).code]).toEqual([404, 'PUB_ERR_NOTIFICATION_CHANNEL_NOT_FOUND']);
    expect((await fetch(channel.receiveFrom)).status).toBe(404);
  });

  it('answers bad subscriptions with problem+json', async () => {
    running = await startTestPublisher();
    const cases: Array<[Promise<Response>, number, string]> = [
      [subscribe({ topic: stream() }, 'text/plain'), 415, 'PUB_ERR_UNSUPPORTED_MEDIA_TYPE'],
      [
        fetch(`${running.url}/notifications/eventsource`, { method: 'POST', headers: { 'content-type': 'application/ld+json' }, body: '{"type":' }),
        400,
        'PUB_ERR_NOTIFICATION_BAD_REQUEST',
      ],
      [subscribe({ type: 'WebSocketChannel2023', topic: stream() }), 422, 'PUB_ERR_NOTIFICATION_UNSUPPORTED_TYPE'],
      [subscribe({ topic: `${running.url}/streams/nope` }), 422, 'PUB_ERR_NOTIFICATION_UNKNOWN_TOPIC'],
      [subscribe({ topic: 'https://elsewhere.example/streams/parking' }), 422, 'PUB_ERR_NOTIFICATION_UNKNOWN_TOPIC'],
      [subscribe({}), 422, 'PUB_ERR_NOTIFICATION_INVALID'],
      [subscribe({ topic: stream(), endAt: '2001-01-01T00:00:00Z' }), 422, 'PUB_ERR_NOTIFICATION_INVALID'],
      [subscribe({ topic: stream(), rate: 'P1M' }), 422, 'PUB_ERR_NOTIFICATION_INVALID'],
      [subscribe({ topic: stream(), startAt: '2030-01-01T00:00:00Z' }), 422, 'PUB_ERR_NOTIFICATION_INVALID'],
      [fetch(`${running.url}/notifications/eventsource/unknown`), 404, 'PUB_ERR_NOTIFICATION_CHANNEL_NOT_FOUND'],
    ];
    for (const [answer, status, code] of cases) {
      const response = await answer;
      expect([response.status, (await readProblem(response)).code]).toEqual([status, code]);
    }
  });

  it('refuses a subscription beyond maxNotificationChannels with 503 and Retry-After', async () => {
    running = await startTestPublisher({ flags: ['--max-notification-channels', '1'] });
    expect((await subscribe({ topic: stream() })).status).toBe(200);
    const full = await subscribe({ topic: stream() });
    expect(full.status).toBe(503);
    expect(full.headers.get('retry-after')).toBe(String(running.config.pressureRetryAfterSeconds));
    expect((await readProblem(full)).code).toBe('PUB_ERR_NOTIFICATION_CHANNELS_FULL');
  });

  it('ends every channel at shutdown', async () => {
    running = await startTestPublisher();
    const channel = (await (await subscribe({ topic: stream() })).json()) as Channel;
    await listen(channel.receiveFrom);
    expect(await running.publisher.shutdown()).toBe(true);
    running = undefined;
  });
});

describe('Solid notifications, WebSocketChannel2023, with a plain WebSocket client', () => {
  /** Subscribes as a Solid app does for a WebSocket: a JSON-LD POST to that channel type's service. */
  function subscribeWebSocket(body: Record<string, unknown>): Promise<Response> {
    return fetch(`${running!.url}/notifications/websocket`, {
      method: 'POST',
      headers: { 'content-type': 'application/ld+json' },
      body: JSON.stringify({ '@context': [CONTEXT], type: 'WebSocketChannel2023', ...body }),
    });
  }

  /** A `ws` client on `receiveFrom`, each text message parsed as JSON-LD (what a Solid app does with it). */
  async function listenWebSocket(receiveFrom: string) {
    const client = await openWs(receiveFrom);
    return { client, received: async (count: number) => (await client.waitForMessages(count)).map((message) => JSON.parse(message.text) as Record<string, unknown>) };
  }

  it('is discovered beside EventSourceChannel2023, subscribed to with fetch, and notifies each element as one text message', async () => {
    running = await startTestPublisher();
    const description = await (await fetch(`${running.url}/notifications`, { headers: { accept: 'text/turtle' } })).text();
    expect(description).toContain(`<${running.url}/notifications/websocket>`);
    expect(description).toMatch(/notify:channelType notify:WebSocketChannel2023/);
    const descriptor = await (await fetch(stream(), { headers: { accept: 'application/n-triples' } })).text();
    expect(descriptor).toContain(`<${stream()}> <${NOTIFY}subscription> <${running.url}/notifications/websocket> .`);
    expect(descriptor).toContain(`<${running.url}/notifications/websocket> <${NOTIFY}channelType> <${NOTIFY}WebSocketChannel2023> .`);

    const answer = await subscribeWebSocket({ topic: stream() });
    expect(answer.status).toBe(200);
    const channel = (await answer.json()) as Channel;
    expect(channel).toMatchObject({ '@context': [CONTEXT], type: 'WebSocketChannel2023', topic: stream() });
    const wsBase = running.url.replace(/^http/, 'ws');
    expect(channel.receiveFrom).toMatch(new RegExp(`^${wsBase}/notifications/websocket/[A-Za-z0-9_-]{22}$`));

    const listener = await listenWebSocket(channel.receiveFrom);
    const generatedAt = new Date(Date.UTC(2030, 0, 1, 0, 0, 1));
    await running.push(undefined, generatedAt);
    await running.push(undefined, generatedAt);
    expect(await listener.received(2)).toEqual(
      [1, 2].map((seq) => ({
        '@context': ['https://www.w3.org/ns/activitystreams', CONTEXT],
        id: `urn:rdf-stream:notification:add:${elementIri(seq)}`,
        type: 'Add',
        object: elementIri(seq),
        target: stream(),
        state: id(seq),
        published: generatedAt.toISOString(),
      })),
    );
    listener.client.close();
  });

  it('honours state and rate as EventSourceChannel2023 does', async () => {
    running = await startTestPublisher();
    await running.push();
    await running.push();
    const stale = (await (await subscribeWebSocket({ topic: stream(), state: id(1) })).json()) as Channel;
    const behind = await listenWebSocket(stale.receiveFrom);
    expect(await behind.received(1)).toMatchObject([{ state: id(2) }]);
    const rated = (await (await subscribeWebSocket({ topic: `${stream()}/latest`, state: id(2), rate: 'PT2S' })).json()) as Channel;
    const slow = await listenWebSocket(rated.receiveFrom);
    for (let index = 0; index < 3; index++) await running.push();
    expect((await slow.received(2)).map((notification) => [notification.type, notification.state])).toEqual([
      ['Update', id(3)],
      ['Update', id(5)],
    ]);
    behind.client.close();
    slow.client.close();
  });

  it('honours endAt: the channel closes then, and is gone (404 before the upgrade)', async () => {
    running = await startTestPublisher();
    const channel = (await (await subscribeWebSocket({ topic: stream(), endAt: new Date(Date.now() + 300).toISOString() })).json()) as Channel;
    const listener = await listenWebSocket(channel.receiveFrom);
    expect(await listener.client.closed).toEqual({ code: 1000, reason: 'channel ended (endAt)' });
    const gone = await openWs(channel.receiveFrom).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(UpgradeRefused);
    expect([(gone as UpgradeRefused).status, (gone as UpgradeRefused).problem.code]).toEqual([404, 'PUB_ERR_NOTIFICATION_CHANNEL_NOT_FOUND']);
  });

  it('unsubscribes with DELETE on the channel over HTTP: the WebSocket is closed 1000, and the channel is gone', async () => {
    running = await startTestPublisher();
    const channel = (await (await subscribeWebSocket({ topic: stream() })).json()) as Channel;
    const listener = await listenWebSocket(channel.receiveFrom);
    const asHttp = channel.id.replace(/^ws/, 'http');
    // Not through the other channel type's service.
    expect((await fetch(asHttp.replace('/websocket/', '/eventsource/'), { method: 'DELETE' })).status).toBe(404);
    expect((await fetch(asHttp, { method: 'DELETE' })).status).toBe(204);
    expect(await listener.client.closed).toEqual({ code: 1000, reason: 'channel deleted' });
    expect(((await openWs(channel.receiveFrom).catch((error: unknown) => error)) as UpgradeRefused).status).toBe(404);
  });

  it("refuses the other channel type's subscriptions and receivers", async () => {
    running = await startTestPublisher();
    const wrongType = await fetch(`${running.url}/notifications/websocket`, {
      method: 'POST',
      headers: { 'content-type': 'application/ld+json' },
      body: JSON.stringify({ '@context': [CONTEXT], type: 'EventSourceChannel2023', topic: stream() }),
    });
    expect([wrongType.status, (await readProblem(wrongType)).code]).toEqual([422, 'PUB_ERR_NOTIFICATION_UNSUPPORTED_TYPE']);
    const eventSource = (await (await subscribe({ topic: stream() })).json()) as Channel;
    const asWebSocket = eventSource.receiveFrom.replace(/^http/, 'ws').replace('/eventsource/', '/websocket/');
    expect(((await openWs(asWebSocket).catch((error: unknown) => error)) as UpgradeRefused).status).toBe(404);
    const webSocket = (await (await subscribeWebSocket({ topic: stream() })).json()) as Channel;
    expect((await fetch(webSocket.receiveFrom.replace(/^ws/, 'http'))).status).toBe(426);
  });

  it('closes every channel 1012 at shutdown, with the delay to come back after', async () => {
    running = await startTestPublisher({ flags: ['--sse-retry-ms', '1000', '--shutdown-retry-jitter-ms', '1000'] });
    const channel = (await (await subscribeWebSocket({ topic: stream() })).json()) as Channel;
    const listener = await listenWebSocket(channel.receiveFrom);
    await vi.waitUntil(() => running!.publisher.app.server.listening, patience);
    expect(await running.publisher.shutdown()).toBe(true);
    running = undefined;
    const { code, reason } = await listener.client.closed;
    expect(code).toBe(1012);
    expect((JSON.parse(reason) as { retryMs: number }).retryMs).toBeGreaterThanOrEqual(1000);
  });
});
