/**
 * The topology of docker/compose.scale-out.yml, started from Debian's packages instead of images:
 * a private Valkey with its append-only file flushed every second, two publisher processes on
 * that shared log with one base URL (nginx's), and nginx from docker/nginx/nginx.conf.template
 * in front of both (scripts/proxy.sh, one --upstream per instance). What a client sees through
 * nginx is checked: /latest cached, and an SSE subscriber whose instance dies resuming on the
 * other with no gap and no duplicate.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseElementId } from '@rdf-stream/protocol';
import { freePort, openSse } from '../../src/testing.js';
import { PrivateRedis } from '../support/private-redis.js';

const packageDir = fileURLToPath(new URL('../..', import.meta.url));
const proxyScript = fileURLToPath(new URL('../../../../scripts/proxy.sh', import.meta.url));

/** Seconds between two elements of each instance's simulator: short, so that the test sees many. */
const INTERVAL_SECONDS = 0.2;
/** Events the subscriber must receive on the instance it first reaches, and again after the fail-over (count). */
const EVENTS_PER_INSTANCE = 5;
/** Upper bound of the whole scenario: two starts through tsx, a reconnection after `retry`, a source lease taken over. */
const SCENARIO_TIMEOUT_MS = 90_000;

interface Instance {
  readonly port: number;
  readonly child: ChildProcess;
  readonly exited: Promise<unknown>;
  readonly output: () => string;
}

/** A publisher process on the shared log, as the compose file runs it (log redis, nginx's base URL). */
function startInstance(port: number, redisUrl: string, baseUrl: string): Instance {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli.ts', '--log', 'redis', '--redis-url', redisUrl, '--host', '127.0.0.1', '--port', String(port), '--base-url', baseUrl, '--interval', String(INTERVAL_SECONDS), '--log-format', 'json'],
    { cwd: packageDir, env: { ...process.env, INIT_CWD: packageDir }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  for (const stream of [child.stdout!, child.stderr!]) stream.setEncoding('utf8').on('data', (chunk: string) => (output = (output + chunk).slice(-8_000)));
  return { port, child, exited: once(child, 'exit'), output: () => output };
}

/** Resolves once the instance logs that it publishes; rejects, with its output, if it exits first. */
function publishing(instance: Instance): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => instance.output().includes('"msg":"publishing ') && resolve();
    instance.child.stdout!.on('data', check);
    void instance.exited.then(() => reject(new Error(`the publisher on ${instance.port} exited before publishing: ${instance.output()}`)));
    check();
  });
}

const running = (instance: Instance) => instance.child.exitCode === null && instance.child.signalCode === null;

/** What one instance says of the demo stream, asked directly (not through nginx). */
async function streamHealth(instance: Instance): Promise<{ subscribers: number; leaseHolder: boolean }> {
  const health = (await (await fetch(`http://127.0.0.1:${instance.port}/health`)).json()) as {
    streams: { parking: { subscribers: number; source: { leaseHolder?: boolean } } };
  };
  const { subscribers, source } = health.streams.parking;
  return { subscribers, leaseHolder: source.leaseHolder === true };
}

/** A real EventSource (the eventsource package), with every id it received and every connection it opened. */
interface Subscription {
  readonly received: string[];
  /** Each connection: the Last-Event-ID it sent (null: none), and how many events had arrived before it. */
  readonly connections: { readonly lastEventId: string | null; readonly receivedBefore: number }[];
  /**
   * `shed` events received: an instance under pressure (a busy machine) answers a new
   * EventSource with one and a `retry:`, and the EventSource comes back, maybe to the other instance.
   */
  readonly sheds: () => number;
  /** What each error the EventSource reported said, with the events received by then: why it reconnected. */
  readonly errors: string[];
  /** Resolves once `count` events have arrived in all; rejects if the EventSource gives up. */
  untilReceived(count: number): Promise<void>;
  close(): void;
}

function subscribe(url: string): Subscription {
  const received: string[] = [];
  const connections: Subscription['connections'] = [];
  const waiters: Array<() => void> = [];
  let failed: string | undefined;
  const wakeAll = () => {
    for (const wake of waiters.splice(0)) wake();
  };
  const source = new EventSource(url, {
    fetch: (input, init) => {
      connections.push({ lastEventId: new Headers(init?.headers).get('last-event-id'), receivedBefore: received.length });
      return fetch(input, init);
    },
  });
  source.onmessage = (event) => {
    received.push(event.lastEventId);
    wakeAll();
  };
  let sheds = 0;
  source.addEventListener('shed', () => (sheds += 1));
  const errors: string[] = [];
  // An EventSource gives up (no more reconnections) on an answer that is not an event stream.
  source.onerror = (event) => {
    errors.push(`after ${received.length} events: ${event.message ?? 'no message'} (code ${event.code ?? 'none'})`);
    if (source.readyState !== EventSource.CLOSED) return;
    failed = `the EventSource gave up after ${received.length} events: ${event.message ?? 'no message'}`;
    wakeAll();
  };
  return {
    received,
    connections,
    sheds: () => sheds,
    errors,
    untilReceived: (count) =>
      new Promise<void>((resolve, reject) => {
        const check = () => (failed !== undefined ? reject(new Error(failed)) : received.length >= count ? resolve() : waiters.push(check));
        check();
      }),
    close: () => source.close(),
  };
}

/** Most subscriptions opened to find one that nginx sent to the instance running the source (round-robin alternates: two suffice). */
const MAX_SUBSCRIPTIONS = 4;

/** The epoch and sequence number of an event's id (`{epoch}-{seq}`). */
function elementIdOf(id: string): { epoch: string; seq: number } {
  const parsed = parseElementId(id);
  if (parsed === undefined) throw new Error(`not an element id: ${id}`);
  return parsed;
}

describe('two publishers on one log in Valkey, behind nginx (docker/compose.scale-out.yml without Docker)', () => {
  let valkey: PrivateRedis;
  let scratch: string;
  let nginxUrl: string;
  const instances: Instance[] = [];

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'rdf-stream-scale-out-'));
    // As the compose file's Valkey: its append-only file on, flushed every second.
    valkey = await PrivateRedis.start({ appendfsync: 'everysec' });
    const nginxPort = await freePort();
    nginxUrl = `http://127.0.0.1:${nginxPort}`;
    for (let index = 0; index < 2; index += 1) instances.push(startInstance(await freePort(), valkey.url, nginxUrl));
    await Promise.all(instances.map(publishing));
    execFileSync(proxyScript, ['start', 'nginx', ...instances.flatMap(({ port }) => ['--upstream', `127.0.0.1:${port}`]), '--port', String(nginxPort), '--dir', scratch], { stdio: 'pipe' });
    // The log holds an element before any test asks for one (until then /latest answers 503).
    const first = await openSse(`${nginxUrl}/streams/parking/events`);
    await first.waitForEvents(1);
    first.close();
  }, SCENARIO_TIMEOUT_MS);

  afterAll(async () => {
    if (scratch !== undefined) execFileSync(proxyScript, ['stop', 'nginx', '--dir', scratch], { stdio: 'pipe' });
    await Promise.all(
      instances.filter(running).map(async (instance) => {
        instance.child.kill('SIGTERM');
        await instance.exited;
      }),
    );
    await valkey?.close();
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  }, SCENARIO_TIMEOUT_MS);

  it("/latest answers through nginx, from nginx's cache, with IRIs of nginx's address", async () => {
    const latest = () => fetch(`${nginxUrl}/streams/parking/latest`, { headers: { accept: 'application/n-triples' } });
    const first = await latest();
    expect(first.status).toBe(200);
    expect(await first.text()).toContain(`<${nginxUrl}/streams/parking/elements/`);
    // The next element is due within the second: the publisher lets shared caches keep it for
    // one (s-maxage=1), which nginx counts in whole seconds, so a second request at once is a hit.
    const second = await latest();
    expect(second.status).toBe(200);
    expect(second.headers.get('x-cache-status')).toBe('HIT');
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
  });

  it(
    'an SSE subscriber whose instance dies reconnects through nginx with Last-Event-ID and resumes on the other: no gap, no duplicate',
    async () => {
      const eventsUrl = `${nginxUrl}/streams/parking/events`;
      // The hardest case: the instance that dies also runs the source, so that the survivor must
      // take the source over (its lease) while the subscriber moves to it. Subscriptions are
      // opened one at a time until nginx has sent one there; the instance that gained a
      // subscriber with each is the one it is connected to.
      const subscriptions: Subscription[] = [];
      let target: { subscription: Subscription; instance: Instance } | undefined;
      try {
        let counts = [0, 0];
        while (target === undefined) {
          if (subscriptions.length === MAX_SUBSCRIPTIONS) throw new Error(`nginx sent none of ${MAX_SUBSCRIPTIONS} subscriptions to the instance running the source`);
          const subscription = subscribe(eventsUrl);
          subscriptions.push(subscription);
          // Subscribed before its first event: the instance counts it from then on.
          await subscription.untilReceived(1);
          const healths = await Promise.all(instances.map(streamHealth));
          expect(healths.filter(({ leaseHolder }) => leaseHolder)).toHaveLength(1);
          const gained = healths.map(({ subscribers }, index) => subscribers - counts[index]!);
          expect([...gained].sort()).toEqual([0, 1]);
          counts = healths.map(({ subscribers }) => subscribers);
          const instance = instances[gained.indexOf(1)]!;
          if (healths[gained.indexOf(1)]!.leaseHolder) target = { subscription, instance };
        }
        const { subscription, instance: connected } = target;
        const survivor = instances.find((instance) => instance !== connected)!;
        await subscription.untilReceived(EVENTS_PER_INSTANCE);
        const beforeKill = subscriptions.map(({ connections, sheds }) => ({ connections: connections.length, sheds: sheds() }));

        // A crash: no drain, no retry hint, no release of the lease; nginx's stream to the client
        // ends with the instance's.
        connected.child.kill('SIGKILL');
        await connected.exited;
        await subscription.untilReceived(subscription.received.length + EVENTS_PER_INSTANCE);
        const survivorHealth = await streamHealth(survivor);
        expect(survivorHealth.leaseHolder).toBe(true);
        expect(survivorHealth.subscribers).toBe(subscriptions.length);
        for (const each of subscriptions) each.close();

        // It reconnected through nginx (which skipped the dead instance), each time with the id of
        // the last event it had received; the others, on the survivor, never had to. Before the
        // crash, a subscription connects once more for each time an instance shed it.
        expect(subscription.connections.length).toBeGreaterThan(beforeKill[subscriptions.indexOf(subscription)]!.connections);
        expect(subscription.connections.at(-1)!.receivedBefore).toBeGreaterThanOrEqual(EVENTS_PER_INSTANCE);
        subscriptions.forEach((each, index) => {
          const why = `${JSON.stringify({ connections: each.connections, errors: each.errors, sheds: each.sheds() })}; the survivor's log: ${survivor.output()}`;
          expect(beforeKill[index]!.connections, `connections before the crash: ${why}`).toBe(1 + beforeKill[index]!.sheds);
          if (each !== subscription) expect(each.connections, `a subscription on the survivor: ${why}`).toHaveLength(beforeKill[index]!.connections);
        });

        // Every subscriber: one epoch, every sequence number once, in order, across both instances.
        for (const { received, connections } of subscriptions) {
          expect(connections[0]).toEqual({ lastEventId: null, receivedBefore: 0 });
          for (const { lastEventId, receivedBefore } of connections.slice(1)) expect(lastEventId).toBe(received[receivedBefore - 1] ?? null);
          const ids = received.map(elementIdOf);
          expect(new Set(ids.map(({ epoch }) => epoch)).size).toBe(1);
          const seqs = ids.map(({ seq }) => seq);
          expect(seqs).toEqual(seqs.map((_, index) => seqs[0]! + index));
        }

        // Requests that are not streams: more than there are instances, so that round-robin
        // picks the dead one too; nginx passes each on to the survivor.
        const statuses = await Promise.all(Array.from({ length: 4 }, () => fetch(`${nginxUrl}/health`).then((response) => response.status)));
        expect(statuses).toEqual([200, 200, 200, 200]);
      } finally {
        for (const each of subscriptions) each.close();
      }
    },
    SCENARIO_TIMEOUT_MS,
  );
});
