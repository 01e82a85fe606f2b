import { afterEach, describe, expect, it, vi } from 'vitest';
import { type PushAudience, PushConnections } from '../../../src/publish/push-connections.js';

/** An audience that records its heartbeats and the delays it was told at shutdown. */
function audience(heartbeat: () => Promise<void> | void = () => {}) {
  const calls = { heartbeats: 0, retries: [] as number[] };
  const recorded: PushAudience = {
    heartbeat: () => {
      calls.heartbeats++;
      return heartbeat();
    },
    closeAll: (retryMs) => {
      calls.retries.push(retryMs(), retryMs());
    },
  };
  return { audience: recorded, calls };
}

describe('PushConnections', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('beats every audience on one interval, and stops beating at shutdown', async () => {
    vi.useFakeTimers();
    const sse = audience();
    const notifications = audience();
    const push = new PushConnections([sse.audience, notifications.audience], () => {});
    push.startHeartbeat(1000);
    await vi.advanceTimersByTimeAsync(2500);
    expect([sse.calls.heartbeats, notifications.calls.heartbeats]).toEqual([2, 2]);
    let retry = 0;
    await push.closeAll(() => ++retry);
    expect(sse.calls.retries).toEqual([1, 2]);
    expect(notifications.calls.retries).toEqual([3, 4]);
    await vi.advanceTimersByTimeAsync(5000);
    expect([sse.calls.heartbeats, notifications.calls.heartbeats]).toEqual([2, 2]);
  });

  it('reports a failed heartbeat and goes on beating the others', async () => {
    vi.useFakeTimers();
    const failing = audience(() => Promise.reject(new Error('socket gone')));
    const throwing = audience(() => {
      throw new Error('thrown');
    });
    const healthy = audience();
    const errors: unknown[] = [];
    const push = new PushConnections([failing.audience, throwing.audience, healthy.audience], (error) => errors.push(error));
    push.startHeartbeat(1000);
    await vi.advanceTimersByTimeAsync(1000);
    expect(healthy.calls.heartbeats).toBe(1);
    expect(errors.map((error) => (error as Error).message).sort()).toEqual(['socket gone', 'thrown']);
    await push.closeAll(() => 0);
  });
});
