import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, testPortRange } from '../../../src/testing/free-port.js';

let directory: string | undefined;
afterEach(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  directory = undefined;
});

function rangeFile(text: string): string {
  directory = mkdtempSync(join(tmpdir(), 'free-port-'));
  const file = join(directory, 'ip_local_port_range');
  writeFileSync(file, text);
  return file;
}

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

describe('testPortRange', () => {
  it('is the 16 384 ports below the ephemeral range, none under 10 000', () => {
    expect(testPortRange(rangeFile('32768\t60999\n'))).toEqual({ low: 16_384, high: 32_767 });
    expect(testPortRange(rangeFile('20000 60999\n'))).toEqual({ low: 10_000, high: 19_999 });
  });

  it('is unknown where the ephemeral range leaves no room below it, or cannot be read', () => {
    expect(testPortRange(rangeFile('1024 65535\n'))).toBeUndefined();
    expect(testPortRange(rangeFile('10500 65535\n'))).toBeUndefined();
    expect(testPortRange(rangeFile('garbage\n'))).toBeUndefined();
    expect(testPortRange(join(tmpdir(), 'no-such-dir-for-free-port', 'range'))).toBeUndefined();
  });
});

describe('freePort', () => {
  it.runIf(process.platform === 'linux')('draws below the kernel’s ephemeral range, a port one can listen on', async () => {
    const range = testPortRange();
    expect(range).toBeDefined();
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(range!.low);
      expect(port).toBeLessThanOrEqual(range!.high);
    }
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(ports[0], '127.0.0.1', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });

  it.runIf(process.platform === 'linux')('draws again when the port drawn is taken', async () => {
    const range = testPortRange()!;
    const size = range.high - range.low + 1;
    // The range's ports are free unless a test or service holds them: hold the first that is.
    const held = createServer();
    let heldPort = range.low + 100;
    while (!(await listenOn(held, heldPort))) heldPort++;
    try {
      const draws = [(heldPort - range.low + 0.5) / size, (heldPort + 1 - range.low + 0.5) / size];
      const port = await freePort('127.0.0.1', () => draws.shift() ?? 0.5);
      expect(port).not.toBe(heldPort);
      expect(draws).toEqual([]);
    } finally {
      await new Promise((resolve) => held.close(resolve));
    }
  });
});
