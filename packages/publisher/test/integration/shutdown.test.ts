import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { freePort, openSse, startTestPublisher } from '../../src/testing.js';

/** For state no event announces: checked every 10 ms, with a deadline for a broken server, not a measure of speed. */
const patience = { timeout: 30_000, interval: 10 };

const packageDir = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

function runCli(args: readonly string[]) {
  const child = spawn(tsx, ['src/cli.ts', ...args], { cwd: packageDir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, exited, output: () => ({ stdout, stderr }) };
}

/** Resolves when the child prints a line matching `pattern` on stdout. */
function printed(child: ChildProcess, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: string) => {
      seen += chunk;
      if (pattern.test(seen)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before printing ${pattern}: ${seen}`)));
  });
}

describe('graceful shutdown (in process)', () => {
  it('tells subscribers to come back after a jittered delay, answers long-polls, and closes', async () => {
    const running = await startTestPublisher({ flags: ['--sse-retry-ms', '1000', '--shutdown-retry-jitter-ms', '3000'] });
    await running.push();
    const connection = await openSse(`${running.url}/streams/parking/events`);
    await running.untilSubscribers(1);
    const url = `${running.url}/streams/parking/latest`;
    const etag = (await fetch(url)).headers.get('etag')!;
    const longPoll = fetch(url, { headers: { 'if-none-match': etag, prefer: 'wait=30' } });
    await running.untilWaiting(1);

    expect(await running.publisher.shutdown()).toBe(true);
    await connection.ended;
    expect(connection.comments).toContain('shutting down');
    const retry = connection.retries.at(-1)!;
    expect(retry).toBeGreaterThanOrEqual(1000);
    expect(retry).toBeLessThanOrEqual(4000);
    expect((await longPoll).status).toBe(304);
    await expect(fetch(url)).rejects.toThrow();
  });
});

describe('graceful shutdown with connections that never sent a request', () => {
  // A browser's speculative pre-connection, or an HTTP client's spare connection, sends nothing.
  // Node counts it as waiting for headers (not idle) until headersTimeoutMs: with a header
  // timeout longer than the shutdown's budget, a shutdown that waited for it would overrun.
  it('ends them, and the shutdown stays within its budget', async () => {
    const running = await startTestPublisher({ flags: ['--shutdown-timeout-ms', '5000', '--headers-timeout-ms', '60000', '--request-timeout-ms', '60000'] });
    await running.push();
    const { port } = new URL(running.url);
    const silent = connect({ host: '127.0.0.1', port: Number(port) });
    await once(silent, 'connect');
    const silentClosed = once(silent, 'close');
    // An idle keep-alive connection beside it, which Fastify's forceCloseConnections ends.
    const latest = await fetch(`${running.url}/streams/parking/latest`);
    await latest.text();
    await vi.waitUntil(() => running.publisher.app.server.listening, patience);

    expect(await running.publisher.shutdown()).toBe(true);
    await silentClosed;
    expect(silent.bytesRead).toBe(0);
  });
});

describe('the command line', () => {
  it('starts the demo stream, and SIGTERM drains subscribers and exits 0', async () => {
    const port = await freePort();
    // A data directory of its own: the default (./data) would be shared with any other run.
    const dataDir = mkdtempSync(join(tmpdir(), 'publisher-cli-'));
    try {
      const cli = runCli(['--port', String(port), '--interval', '1', '--log-level', 'info', '--data-dir', dataDir]);
      await printed(cli.child, /publishing parking at http:\/\/127\.0\.0\.1:\d+\/streams/);
      const connection = await openSse(`http://127.0.0.1:${port}/streams/parking/events?format=turtle`);
      await connection.waitForEvents(1);
      cli.child.kill('SIGTERM');
      await connection.ended;
      expect(connection.comments).toContain('shutting down');
      expect(await cli.exited).toBe(0);
      expect(cli.output().stdout).toMatch(/"msg":"stopped"/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('exits 2 with a message naming the bad value and where it came from', async () => {
    const cli = runCli(['--port', '70000']);
    expect(await cli.exited).toBe(2);
    expect(cli.output().stderr).toMatch(/Invalid configuration:\n {2}- port \(from --port\): .*70000/);
  });

  it('--help lists the options and exits 0', async () => {
    const cli = runCli(['--help']);
    expect(await cli.exited).toBe(0);
    expect(cli.output().stdout).toContain('Usage: rdf-stream-publisher [options]');
    expect(cli.output().stdout).toContain('--max-subscriber-queue-bytes <value>');
  });
});
