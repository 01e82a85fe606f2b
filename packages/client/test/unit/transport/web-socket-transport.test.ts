import { describe, expect, it } from 'vitest';
import { SubscriptionError } from '../../../src/transport/subscription-error.js';
import type { TransportEvent } from '../../../src/transport/transport-event.js';
import { emptyStats } from '../../../src/transport/transport-stats.js';
import type { OpenWebSocket, WebSocketEnd, WebSocketListener } from '../../../src/transport/web-socket-connection.js';
import { webSocketTransport } from '../../../src/transport/web-socket-transport.js';

const WS_URL = 'http://publisher.test/streams/s/ws';

/** One fake connection: what the transport did with it, and how to play the server's part. */
interface FakeConnection {
  readonly url: string;
  readonly listener: WebSocketListener;
  closed: boolean;
  paused: boolean;
}

/**
 * A fake WebSocket whose connections are played by `script` (called on each new connection, in
 * a later turn, as a real socket's events come); `pausable` gives connections pause/resume.
 */
function fakeWebSocket(script: (connection: FakeConnection, index: number) => void, pausable = false) {
  const connections: FakeConnection[] = [];
  const open: OpenWebSocket = (url, listener) => {
    const connection: FakeConnection = { url, listener, closed: false, paused: false };
    connections.push(connection);
    setTimeout(() => script(connection, connections.length - 1), 0);
    return {
      close: () => {
        if (connection.closed) return;
        connection.closed = true;
        setTimeout(() => listener.ended({ code: 1005, reason: '', opened: true }), 0);
      },
      ...(pausable ? { pause: () => (connection.paused = true), resume: () => (connection.paused = false) } : {}),
    };
  };
  return { open, connections };
}

const end = (connection: FakeConnection, close: WebSocketEnd) => {
  connection.closed = true;
  connection.listener.ended(close);
};

async function take(events: AsyncGenerator<TransportEvent>, count: number, onEach?: (event: TransportEvent) => void | Promise<void>): Promise<TransportEvent[]> {
  const taken: TransportEvent[] = [];
  for await (const event of events) {
    taken.push(event);
    await onEach?.(event);
    if (taken.length === count) break;
  }
  return taken;
}

const options = (open: OpenWebSocket, extra: { maxEventBytes?: number; fetch?: typeof fetch } = {}) => ({
  format: 'turtle' as const,
  backoff: { initialDelayMs: 1, maxDelayMs: 1, random: () => 0 },
  maxEventBytes: 1_000,
  stats: emptyStats(),
  openWebSocket: open,
  ...extra,
});

describe('webSocketTransport', () => {
  it('hands over elements across a lost connection, resuming after the last id', async () => {
    const { open, connections } = fakeWebSocket((connection, index) => {
      connection.listener.opened();
      if (index === 0) {
        connection.listener.message('element ep-1\none');
        end(connection, { code: 1006, reason: '', opened: true });
      } else {
        connection.listener.message('element ep-2\ntwo');
      }
    });
    const events = await take(webSocketTransport(WS_URL, options(open)), 3);
    expect(events).toMatchObject([
      { type: 'element', text: 'one', id: 'ep-1' },
      { type: 'reconnect', reason: 'connection lost', delayMs: 0 },
      { type: 'element', text: 'two', id: 'ep-2' },
    ]);
    expect(connections.map((connection) => connection.url)).toEqual([
      'ws://publisher.test/streams/s/ws?format=turtle',
      'ws://publisher.test/streams/s/ws?format=turtle&lastEventId=ep-1',
    ]);
    // The consumer stopped reading: the last connection is closed.
    expect(connections[1]!.closed).toBe(true);
  });

  it('ends the iteration when the stream ended, and throws SubscriptionError on a policy close', async () => {
    const ended = fakeWebSocket((connection) => {
      connection.listener.opened();
      connection.listener.message('element ep-1\none');
      end(connection, { code: 1001, reason: '{"code":"stream-ended"}', opened: true });
    });
    expect(await take(webSocketTransport(WS_URL, options(ended.open)), 5)).toMatchObject([{ type: 'element', id: 'ep-1' }]);
    expect(ended.connections).toHaveLength(1);

    const violated = fakeWebSocket((connection) => {
      connection.listener.opened();
      end(connection, { code: 1008, reason: 'PUB_ERR_WS_CLIENT_MESSAGE', opened: true });
    });
    const failure = await take(webSocketTransport(WS_URL, options(violated.open)), 1).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SubscriptionError);
    expect(failure).toMatchObject({ status: 1008, problem: { code: 'PUB_ERR_WS_CLIENT_MESSAGE' } });
    expect(violated.connections).toHaveLength(1);
  });

  it("throws SubscriptionError with the problem of a refused upgrade, the WebSocket's own or asked over HTTP", async () => {
    const problem = { type: 'about:blank', code: 'PUB_ERR_UNKNOWN_STREAM', detail: 'no stream s' };
    const answer = () => Response.json(problem, { status: 404, headers: { 'content-type': 'application/problem+json' } });
    const told = fakeWebSocket((connection) => end(connection, { code: 1006, reason: '', opened: false, answer: answer() }));
    const failure = await take(webSocketTransport(WS_URL, options(told.open)), 1).catch((error: unknown) => error);
    expect(failure).toMatchObject({ name: 'SubscriptionError', status: 404, problem: { code: 'PUB_ERR_UNKNOWN_STREAM' } });

    const asked: string[] = [];
    const silent = fakeWebSocket((connection) => end(connection, { code: 1006, reason: '', opened: false }));
    const fetchImpl: typeof fetch = async (input) => {
      asked.push(String(input));
      return answer();
    };
    const probed = await take(webSocketTransport(WS_URL, options(silent.open, { fetch: fetchImpl })), 1).catch((error: unknown) => error);
    expect(probed).toMatchObject({ name: 'SubscriptionError', status: 404, problem: { code: 'PUB_ERR_UNKNOWN_STREAM' } });
    expect(asked).toEqual(['http://publisher.test/streams/s/ws?format=turtle']);
  });

  it('tries again when the plain request is answered 426 (the upgrade failed on the way, the request was right)', async () => {
    const { open } = fakeWebSocket((connection, index) => {
      if (index === 0) end(connection, { code: 1006, reason: '', opened: false });
      else connection.listener.message('element ep-1\nback');
    });
    const fetchImpl: typeof fetch = async () => new Response(null, { status: 426, headers: { upgrade: 'websocket' } });
    const events = await take(webSocketTransport(WS_URL, options(open, { fetch: fetchImpl })), 2);
    expect(events).toMatchObject([{ type: 'reconnect', reason: 'the upgrade failed (HTTP 426)' }, { type: 'element', text: 'back' }]);
  });

  it('says the system error of an upgrade that got no answer, and tries again', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    const { open } = fakeWebSocket((connection, index) => {
      if (index === 0) end(connection, { code: 1006, reason: '', opened: false, error: refused });
      else connection.listener.message('element ep-1\nback');
    });
    const events = await take(webSocketTransport(WS_URL, options(open)), 2);
    expect(events).toMatchObject([{ type: 'reconnect', networkError: 'ECONNREFUSED', reason: 'connect ECONNREFUSED 127.0.0.1:9' }, { type: 'element', text: 'back' }]);
  });

  it('pauses the socket while more than maxEventBytes wait to be read, and resumes once half is read', async () => {
    const { open, connections } = fakeWebSocket((connection) => {
      connection.listener.opened();
      for (let seq = 1; seq <= 4; seq++) connection.listener.message(`element ep-${seq}\n${'x'.repeat(400)}`);
    }, true);
    const pausedWhenRead: boolean[] = [];
    await take(webSocketTransport(WS_URL, options(open)), 4, () => {
      pausedWhenRead.push(connections[0]!.paused);
    });
    // 1 600 characters came before anything was read: paused; read down to 500, resumed.
    expect(pausedWhenRead).toEqual([true, true, false, false]);
    expect(connections).toHaveLength(1);
  });

  it('closes a socket it cannot pause when the reader falls behind, hands over what came, and resumes after it', async () => {
    const { open, connections } = fakeWebSocket((connection, index) => {
      connection.listener.opened();
      if (index === 0) for (let seq = 1; seq <= 4; seq++) connection.listener.message(`element ep-${seq}\n${'x'.repeat(400)}`);
      else connection.listener.message('element ep-5\nnext');
    });
    const events = await take(webSocketTransport(WS_URL, options(open)), 6);
    expect(events.map((event) => (event.type === 'element' ? event.id : event.type))).toEqual(['ep-1', 'ep-2', 'ep-3', 'ep-4', 'reconnect', 'ep-5']);
    expect(events[4]).toMatchObject({ reason: 'the reader fell behind' });
    expect(connections[1]!.url).toMatch(/lastEventId=ep-4$/);
  });

  it('closes the socket and returns at once when the signal aborts', async () => {
    const stop = new AbortController();
    const { open, connections } = fakeWebSocket((connection) => {
      connection.listener.opened();
      connection.listener.message('element ep-1\none');
    });
    const events = await take(webSocketTransport(WS_URL, { ...options(open), signal: stop.signal }), 5, () => stop.abort());
    expect(events).toHaveLength(1);
    expect(connections[0]!.closed).toBe(true);
  });
});
