import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, openSse } from '../../src/testing.js';
import { getOnce } from '../support/get-once.js';
import { PrivateRedis } from '../support/private-redis.js';

/**
 * Publisher processes on one Valkey, as on several hosts: the demo stream's simulator runs on
 * the holder of its lease; `kill -9` of the holder hands it to the other.
 */
const packageDir = fileURLToPath(new URL('../..', import.meta.url));
const BASE_URL = 'http://streams.example';
/** Milliseconds the lease lasts unrenewed (its holder renews every third of it). */
const LEASE_MS = 900;

let server: PrivateRedis;
const cleanups: Array<() => unknown> = [];
beforeAll(async () => {
  server = await PrivateRedis.start();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await server.close();
});

interface Running {
  readonly child: ChildProcess;
  readonly direct: string;
}

interface Health {
  readonly streams: { readonly parking: { readonly latestSeq: number; readonly source: { readonly leaseHolder?: boolean; readonly state: string }; readonly log: { readonly epoch: string } } };
}

/** One publisher process (the direct child, so that SIGKILL reaches it), once it says it publishes. */
async function launch(prefix: string): Promise<Running> {
  const port = await freePort();
  const flags = [
    '--log', 'redis', '--redis-url', server.url, '--redis-key-prefix', prefix, '--base-url', BASE_URL, '--port', String(port),
    '--interval', '0.1', '--source-lease-ms', String(LEASE_MS), '--redis-read-block-ms', '200', '--log-level', 'info', '--log-format', 'json',
  ];
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...flags], { cwd: packageDir, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(() => child.kill('SIGKILL'));
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', () => /"msg":"publishing /.test(output) && resolve());
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
  });
  return { child, direct: `http://127.0.0.1:${port}` };
}

const health = async (running: Running) => (await (await fetch(`${running.direct}/health`)).json()) as Health;

/**
 * `/health` on a connection of its own (`getOnce`): of a process with `--workers`, each new
 * connection goes to the next worker, where `fetch`'s kept-alive connection always asks the same
 * one, which may not be the one that runs the source.
 */
const healthOnNewConnection = async (running: Running) => JSON.parse((await getOnce(`${running.direct}/health`)).body) as Health;

/** Resolves with the instance that holds the source's lease, once one does. */
async function holderOf(instances: readonly Running[], read = health): Promise<Running> {
  for (;;) {
    for (const instance of instances) if ((await read(instance)).streams.parking.source.leaseHolder === true) return instance;
    // No event crosses processes: /health is read as a supervisor reads it.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('publisher processes on one shared log', () => {
  it('run the source on one of them; kill -9 of its holder hands it to the other, whose numbers continue with none lost or twice', async () => {
    const prefix = `processes${Date.now()}`;
    const first = await launch(prefix);
    const second = await launch(prefix);
    const holder = await holderOf([first, second]);
    const other = holder === first ? second : first;
    expect((await health(other)).streams.parking.source).toMatchObject({ leaseHolder: false, state: 'ok' });
    // Both say the source is up; only the holder says it runs it.
    for (const [instance, holds] of [[holder, 1], [other, 0]] as const) {
      const metrics = await (await fetch(`${instance.direct}/metrics`)).text();
      expect(metrics).toMatch(/^rdf_stream_source_up\{stream="parking",kind="simulator"\} 1$/m);
      expect(metrics).toMatch(new RegExp(`^rdf_stream_source_lease_holder\\{stream="parking",kind="simulator"\\} ${holds}$`, 'm'));
    }

    // A subscriber on the survivor sees every element from the one it connected after.
    const epoch = (await health(other)).streams.parking.log.epoch;
    const subscriber = await openSse(`${other.direct}/streams/parking/events?format=ntriples`);
    cleanups.push(() => subscriber.close());
    const [firstEvent] = await subscriber.waitForEvents(5);
    const firstSeq = Number(firstEvent!.id!.split('-')[1]);

    const exited = once(holder.child, 'exit');
    holder.child.kill('SIGKILL');
    await exited;
    const beforeTakeOver = (await health(other)).streams.parking.latestSeq;
    expect(await holderOf([other])).toBe(other);
    expect(await (await fetch(`${other.direct}/metrics`)).text()).toMatch(/^rdf_stream_source_lease_holder\{stream="parking",kind="simulator"\} 1$/m);
    // The new holder publishes on: at least five more elements, numbered after the last one.
    const events = await subscriber.waitForEvents(beforeTakeOver - firstSeq + 6);
    expect(events.map((event) => event.id)).toEqual(Array.from({ length: events.length }, (_, n) => `${epoch}-${firstSeq + n}`));
    expect(subscriber.response.headers['stream-gap']).toBeUndefined();
    expect(events.some((event) => event.event === 'gap')).toBe(false);
  });

  it('with --workers 2, two instances share the port and one runs the source; SIGTERM stops both cleanly', async () => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', '--log', 'redis', '--redis-url', server.url, '--redis-key-prefix', `workers${Date.now()}`, '--workers', '2', '--port', String(port), '--interval', '0.1', '--log-format', 'json'],
      { cwd: packageDir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    cleanups.push(() => child.kill('SIGKILL'));
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', () => /instances on the shared log listen on port/.test(output) && resolve());
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
    });
    const running = { child, direct: `http://127.0.0.1:${port}` };
    await holderOf([running], healthOnNewConnection);
    const subscriber = await openSse(`${running.direct}/streams/parking/events?format=ntriples`);
    cleanups.push(() => subscriber.close());
    const events = await subscriber.waitForEvents(3);
    const [, , last] = events.map((event) => Number(event.id?.split('-')[1]));
    expect(last).toBe(Number(events[0]!.id!.split('-')[1]) + 2);
    subscriber.close();
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
    expect(output).toMatch(/"clean":true/);
  });
});
