import { describe, expect, it } from 'vitest';
import { runLabel } from '../../../src/report/run-label.js';

describe('runLabel', () => {
  it('names a run by its mode, its variant in parentheses and the proxy in front of it', () => {
    expect(runLabel({ mode: 'poll', pollStrategy: 'smart', proxy: 'nginx' })).toBe('poll (smart) + nginx');
    expect(runLabel({ mode: 'poll', pollStrategy: 'fixed', proxy: 'varnish' })).toBe('poll (fixed) + varnish');
    expect(runLabel({ mode: 'sse', sseEncoding: 'gzip', proxy: 'none' })).toBe('sse (gzip)');
    expect(runLabel({ mode: 'sse', sseEncoding: 'identity', proxy: 'none' })).toBe('sse (identity)');
    expect(runLabel({ mode: 'websocket', websocketClient: 'ws', proxy: 'none' })).toBe('websocket (ws client)');
    expect(runLabel({ mode: 'websocket', websocketClient: 'lean', proxy: 'none' })).toBe('websocket');
    expect(runLabel({ mode: 'long-poll', httpClient: 'undici', proxy: 'none' })).toBe('long-poll (undici client)');
    expect(runLabel({ mode: 'long-poll', httpClient: 'lean', proxy: 'none' })).toBe('long-poll');
    expect(runLabel({ mode: 'poll', pollStrategy: 'fixed', httpClient: 'undici', proxy: 'nginx' })).toBe('poll (fixed, undici client) + nginx');
    expect(runLabel({ mode: 'poll', pollStrategy: 'smart', httpClient: 'lean', proxy: 'none' })).toBe('poll (smart)');
  });

  it('leaves out what a run does not have: no variant (long-poll, or a summary written before variants), no proxy', () => {
    expect(runLabel({ mode: 'long-poll', proxy: 'none' })).toBe('long-poll');
    expect(runLabel({ mode: 'sse', proxy: 'none' })).toBe('sse');
    expect(runLabel({ mode: 'poll', proxy: 'nginx' })).toBe('poll + nginx');
  });

  it('says when publisher instances shared a Redis log, and how many; a file log is the default, unnamed', () => {
    expect(runLabel({ mode: 'sse', sseEncoding: 'identity', proxy: 'none', log: 'redis', serverInstances: 2 })).toBe('sse (identity) on 2 × redis');
    expect(runLabel({ mode: 'sse', sseEncoding: 'identity', proxy: 'none', log: 'file', serverInstances: 1 })).toBe('sse (identity)');
  });
});
