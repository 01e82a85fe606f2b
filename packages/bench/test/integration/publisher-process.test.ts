import { describe, expect, it, vi } from 'vitest';
import { PublisherProcess } from '../../src/process/publisher-process.js';
import { freePort } from '../../src/reliability/free-port.js';

describe('PublisherProcess', () => {
  it('resolves once GET /health answers with every source started, and stops on SIGTERM with a clean exit', { timeout: 60_000 }, async () => {
    const publisher = await PublisherProcess.start({ port: await freePort(), flags: ['--log', 'memory', '--interval', '1'] });
    try {
      const health = (await (await fetch(`${publisher.url}/health`)).json()) as { status: string };
      expect(health.status).toBe('ok');
      expect(publisher.running).toBe(true);
    } finally {
      // The publisher drains on SIGTERM and exits 0 when the drain finished in time.
      expect(await publisher.stop()).toMatchObject({ code: 0, signal: null });
    }
    expect(publisher.running).toBe(false);
  });

  it('rejects with what the publisher printed when it exits before it serves', { timeout: 60_000 }, async () => {
    await expect(PublisherProcess.start({ port: await freePort(), flags: ['--no-such-flag'] })).rejects.toThrow(/the publisher exited \(\d+\) before it served: .*no-such-flag/s);
  });

  it('says on stderr when the publisher exits without being asked to', { timeout: 60_000 }, async () => {
    const publisher = await PublisherProcess.start({ port: await freePort(), flags: ['--log', 'memory'] });
    const written: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => written.push(String(chunk)) > 0);
    try {
      process.kill(publisher.pid, 'SIGKILL');
      await publisher.exited;
    } finally {
      stderr.mockRestore();
    }
    expect(written.join('')).toMatch(new RegExp(`the publisher ${publisher.pid} exited \\(SIGKILL\\) unasked: `));
  });
});
