import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LoadShedder, type LoadShedderOptions } from '../../../src/http/load-shedder.js';

/** A connection in memory: whether it is being read. */
class FakeSocket extends EventEmitter {
  paused = false;
  destroyed = false;

  pause(): this {
    this.paused = true;
    return this;
  }

  resume(): this {
    this.paused = false;
    return this;
  }
}

class FakeResponse extends EventEmitter {
  status: number | undefined;
  headers: Record<string, unknown> = {};
  body: Buffer | string | undefined;

  writeHead(status: number, headers: Record<string, unknown>): this {
    this.status = status;
    this.headers = headers;
    return this;
  }

  end(body?: Buffer | string): this {
    this.body = body;
    this.emit('finish');
    return this;
  }
}

const shedders: LoadShedder[] = [];
afterEach(() => {
  vi.useRealTimers();
  for (const shedder of shedders.splice(0)) shedder.close();
});

function shedderWith(options: Partial<LoadShedderOptions> = {}) {
  const shed: string[] = [];
  const shedder = new LoadShedder({
    maxEventLoopTurnMs: 5,
    shedHoldMs: 600_000,
    retryAfterSeconds: 2,
    sseRetryMs: 1_000,
    onShed: (method, status) => void shed.push(`${method} ${status}`),
    ...options,
  });
  shedders.push(shedder);
  const request = (url: string, method = 'GET') => {
    const socket = new FakeSocket();
    const response = new FakeResponse();
    const answered = shedder.answer({ url, method, socket } as unknown as IncomingMessage, response as unknown as ServerResponse);
    return { answered, response, socket };
  };
  return { shedder, shed, request };
}

/** Keeps the event loop's turns long (a busy loop between turns) until the shedder sees it. */
async function saturate(shedder: LoadShedder): Promise<void> {
  await vi.waitFor(
    () => {
      const until = Date.now() + 40;
      while (Date.now() < until);
      expect(shedder.shedding).toBe(true);
    },
    { timeout: 20_000, interval: 5 },
  );
}

describe('LoadShedder', () => {
  it('serves everything as usual while the event loop keeps up', () => {
    const { shedder, shed, request } = shedderWith({ maxEventLoopTurnMs: 0 });
    const { answered, response, socket } = request('/streams/parking/latest');
    expect(answered).toBe(false);
    expect(response.status).toBeUndefined();
    expect(socket.paused).toBe(false);
    expect(shedder.shed).toBe(0);
    expect(shed).toEqual([]);
  });

  it('forgets the delays before the server listens (its own start-up), and sheds again if the loop stays saturated', async () => {
    const { shedder, request } = shedderWith();
    await saturate(shedder);
    shedder.forgetStartUp();
    expect(shedder.shedding).toBe(false);
    expect(request('/streams/parking/latest').answered).toBe(false);
    await saturate(shedder);
    expect(request('/streams/parking/latest').answered).toBe(true);
  });

  describe('once the event loop is saturated', () => {
    it('answers 503 problem+json with Retry-After, then reads nothing more from the connection until then', async () => {
      const { shedder, shed, request } = shedderWith();
      await saturate(shedder);
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const { answered, response, socket } = request('/streams/parking/latest');
      expect(answered).toBe(true);
      expect(response.status).toBe(503);
      expect(response.headers).toMatchObject({ 'content-type': 'application/problem+json', 'retry-after': '2', 'cache-control': 'no-store' });
      expect(JSON.parse(String(response.body))).toMatchObject({ status: 503, code: 'PUB_ERR_OVERLOADED' });
      expect(shedder.shed).toBe(1);
      expect(shed).toEqual(['GET 503']);
      expect(socket.paused).toBe(true);
      vi.advanceTimersByTime(1_999);
      expect(socket.paused).toBe(true);
      vi.advanceTimersByTime(1);
      expect(socket.paused).toBe(false);
    });

    it('sends no body to a HEAD', async () => {
      const { shedder, shed, request } = shedderWith();
      await saturate(shedder);
      const { response } = request('/streams/parking/latest', 'HEAD');
      expect(response.status).toBe(503);
      expect(response.body).toBeUndefined();
      expect(shed).toEqual(['HEAD 503']);
    });

    it('gives a new EventSource a 200 stream with a `shed` event and a retry, not a 503 it would give up on', async () => {
      const { shedder, shed, request } = shedderWith();
      await saturate(shedder);
      for (const feed of ['events', 'patches']) {
        const { answered, response, socket } = request(`/streams/parking/${feed}?format=turtle`);
        expect(answered).toBe(true);
        expect(response.status).toBe(200);
        expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
        expect(response.headers['retry-after']).toBeDefined();
        expect(String(response.body)).toMatch(/^retry: \d+$/m);
        expect(String(response.body)).toContain('event: shed');
        expect(socket.paused).toBe(false);
      }
      expect(shed).toEqual(['GET 200', 'GET 200']);
    });

    it("lets operators' /health and /metrics through, parking their connection for a second afterwards", async () => {
      const { shedder, shed, request } = shedderWith();
      await saturate(shedder);
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      for (const path of ['/health', '/metrics']) {
        const { answered, response, socket } = request(path);
        expect(answered).toBe(false);
        expect(socket.paused).toBe(false);
        response.end('ok');
        expect(socket.paused).toBe(true);
        vi.advanceTimersByTime(1_000);
        expect(socket.paused).toBe(false);
      }
      expect(shedder.shed).toBe(0);
      expect(shed).toEqual([]);
    });
  });
});
