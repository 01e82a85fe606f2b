import { describe, expect, it } from 'vitest';
import { networkErrorCode, networkFailure } from '../../../src/transport/network-error.js';

const systemError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code });
const fetchFailed = (cause: unknown) => new TypeError('fetch failed', { cause });

describe('networkErrorCode', () => {
  it("reads the socket's code under fetch's TypeError", () => {
    expect(networkErrorCode(fetchFailed(systemError('ECONNREFUSED')))).toBe('ECONNREFUSED');
  });

  it('reads the code of the addresses of a host that all refused (AggregateError)', () => {
    expect(networkErrorCode(fetchFailed(new AggregateError([new Error('no code'), systemError('ECONNREFUSED')])))).toBe('ECONNREFUSED');
  });

  it("gives fetch's own reason when it refuses to connect without a code", () => {
    expect(networkErrorCode(fetchFailed(new Error('bad port')))).toBe('bad port');
  });

  it('has nothing to say of an HTTP failure or a browser fetch error', () => {
    expect(networkErrorCode(new Error('HTTP 503'))).toBeUndefined();
    expect(networkErrorCode(new TypeError('Failed to fetch'))).toBeUndefined();
    expect(networkErrorCode(Object.assign(new Error('x'), { code: 'UND_ERR_SOCKET' }))).toBeUndefined();
  });
});

describe('networkFailure', () => {
  it('adds the code to a message that lacks it, once', () => {
    expect(networkFailure(fetchFailed(systemError('ECONNREFUSED'))).description).toBe('fetch failed (ECONNREFUSED)');
    expect(networkFailure(systemError('ECONNRESET')).description).toBe('connect ECONNRESET 127.0.0.1:9');
  });
});
