import { describe, expect, it } from 'vitest';
import { plannedPortTaken, SourceEndpoint } from '../../../src/fleet/source-endpoint.js';

const failure = (code: string) => Object.assign(new Error(code), { code });

describe('SourceEndpoint', () => {
  it('names the planned port for the first connection only', () => {
    const source = new SourceEndpoint('127.0.0.3', 41_000);
    expect(source.take()).toEqual({ localAddress: '127.0.0.3', localPort: 41_000 });
    expect(source.take()).toEqual({ localAddress: '127.0.0.3' });
    expect(new SourceEndpoint('127.0.0.3', 0).take()).toEqual({ localAddress: '127.0.0.3' });
  });

  it('takes EADDRINUSE and EADDRNOTAVAIL of a connection from a planned port for the plan failing, and nothing else', () => {
    const planned = { localAddress: '127.0.0.3', localPort: 41_000 };
    expect(plannedPortTaken(failure('EADDRINUSE'), planned)).toBe(true);
    expect(plannedPortTaken(failure('EADDRNOTAVAIL'), planned)).toBe(true);
    expect(plannedPortTaken(failure('ECONNREFUSED'), planned)).toBe(false);
    // The kernel chose the port: the publisher's side or the machine's, counted as an error.
    expect(plannedPortTaken(failure('EADDRNOTAVAIL'), { localAddress: '127.0.0.3' })).toBe(false);
    expect(plannedPortTaken(failure('EADDRINUSE'), undefined)).toBe(false);
  });
});
