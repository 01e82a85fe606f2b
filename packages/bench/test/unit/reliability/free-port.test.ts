import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { readPortRange } from '../../../src/collect/port-usage.js';
import { freePort } from '../../../src/reliability/free-port.js';

function listenOn(server: Server, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const onError = () => resolve(false);
    server.once('error', onError);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', onError);
      resolve(true);
    });
  });
}

describe.runIf(process.platform === 'linux')('freePort', () => {
  it('draws below the ephemeral range, where no outgoing connection takes the port before the service listens', async () => {
    const ephemeralLow = readPortRange().low;
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeLessThan(ephemeralLow);
      expect(port).toBeGreaterThanOrEqual(10_000);
    }
    const server = createServer();
    expect(await listenOn(server, ports[0]!)).toBe(true);
    await new Promise((resolve) => server.close(resolve));
  });

  it('draws again when the port drawn is taken', async () => {
    const high = readPortRange().low - 1;
    const low = Math.max(10_000, high - 16_384 + 1);
    const held = createServer();
    let heldPort = low + 200;
    while (!(await listenOn(held, heldPort))) heldPort++;
    try {
      const draws = [(heldPort - low + 0.5) / (high - low + 1), 0.5];
      expect(await freePort(() => draws.shift() ?? 0.5)).not.toBe(heldPort);
      expect(draws).toEqual([]);
    } finally {
      await new Promise((resolve) => held.close(resolve));
    }
  });
});
