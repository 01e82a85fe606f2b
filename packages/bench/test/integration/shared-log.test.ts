import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Value } from '@sinclair/typebox/value';
import { afterAll, describe, expect, it } from 'vitest';
import { PrivateValkey } from '../../src/process/private-valkey.js';
import { freePort } from '../../src/reliability/free-port.js';
import { type Summary, SummarySchema } from '../../src/report/summary-schema.js';

const run = promisify(execFile);
const out = mkdtempSync(join(tmpdir(), 'bench-shared-log-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
const cwd = fileURLToPath(new URL('../..', import.meta.url));

/** Valkey servers on 127.0.0.1, by their process title (`valkey-server 127.0.0.1:<port>`). */
const loopbackValkeys = () =>
  run('pgrep', ['-af', 'valkey-server 127.0.0.1:']).then(
    ({ stdout }) => stdout.trim().split('\n').filter(Boolean),
    () => [],
  );

describe('pnpm bench --compare-log file,redis --server-instances 2 (its own Valkey)', () => {
  it('runs one publisher on its file log, then two sharing a Valkey, and reports each instance, Valkey and the latency it added', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', cli, '--mode', 'sse', '--clients', '100', '--duration', '4', '--ramp', '1', '--interval', '1', '--port', '18990', '--throughput-duration', '0',
        '--compare-log', 'file,redis', '--server-instances', '2', '--out', out],
      { cwd, timeout: 180_000 },
    );
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
    expect([...Value.Errors(SummarySchema, summary)].map((error) => `${error.path}: ${error.message}`)).toEqual([]);
    const [file, redis] = summary.runs;
    expect(summary.runs.map((r) => [r.log, r.serverInstances, r.connected, r.missedUpdates])).toEqual([
      ['file', 1, 100, 0],
      ['redis', 2, 100, 0],
    ]);
    // One instance holds the source's lease: the stream gets one source's elements (4 s at 1 s), not one per instance.
    expect(redis!.updatesPublished).toBeLessThanOrEqual(5);
    expect(stdout).not.toMatch(/more than one of the 2 instances ran the stream's source/);
    expect(file!.instances.map((instance) => instance.clients)).toEqual([100]);
    expect(file!.redis).toBeUndefined();
    // The clients dealt round-robin: 50 on each instance, each instance sampled apart.
    expect(redis!.instances.map((instance) => [new URL(instance.url).port, instance.clients])).toEqual([['18990', 50], ['18991', 50]]);
    for (const instance of redis!.instances) expect(instance.rssMiB.max).toBeGreaterThan(0);
    expect(redis!.redis?.appendfsync).toBe('everysec');
    expect(redis!.redis?.rssMiB?.max).toBeGreaterThan(0);
    expect(redis!.redis?.usedMemoryMiB).toBeGreaterThan(0);
    expect(summary.logComparison).toEqual([
      expect.objectContaining({ run: 'sse (identity)', clients: 100, redisInstances: 2, addedMs: { p50: expect.any(Number), p99: expect.any(Number) } }),
    ]);
    expect(stdout).toMatch(/Latency added by the shared Redis log/);
    expect(stdout).toMatch(/redis 127\.0\.0\.1:\d+ \(appendfsync everysec\)/);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toMatch(/Latency added by the shared Redis log/);
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toMatch(/^\| sse \(identity\) on 2 × redis \| 100 \| redis 127\.0\.0\.1:\d+ \(appendfsync everysec\) \|/m);
    // The bench stopped the Valkey it started.
    const port = new URL(redis!.redis!.url).port;
    expect((await loopbackValkeys()).filter((line) => line.endsWith(`:${port}`))).toEqual([]);
  }, 200_000);
});

describe('pnpm bench --log redis --redis-url (a Valkey already running, on this machine)', () => {
  it('shares the given server, finds its pid from its INFO to sample it, and leaves it running', async () => {
    const valkey = await PrivateValkey.start(await freePort(), 'always');
    const dir = join(out, 'given');
    try {
      await run(
        process.execPath,
        ['--import', 'tsx', cli, '--mode', 'websocket', '--clients', '60', '--duration', '3', '--ramp', '1', '--interval', '1', '--port', '18995', '--throughput-duration', '0',
          '--log', 'redis', '--server-instances', '2', '--redis-url', valkey.url, '--out', dir],
        { cwd, timeout: 180_000 },
      );
      const [only] = (JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as Summary).runs;
      expect([only!.log, only!.serverInstances, only!.connected, only!.missedUpdates]).toEqual(['redis', 2, 60, 0]);
      expect(only!.redis).toMatchObject({ url: valkey.url, appendfsync: null });
      expect(only!.redis?.rssMiB?.max).toBeGreaterThan(0);
      expect((await loopbackValkeys()).some((line) => line.endsWith(`:${valkey.port}`))).toBe(true);
    } finally {
      await valkey.stop();
    }
  }, 200_000);
});
