import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { formatNames, mediaTypes } from '@rdf-stream/protocol';
import { readProblem } from '../support/problem.js';
import { mountSmallFilesystem } from '../support/small-filesystem.js';
import { writeVersion2Log } from '../support/version-2-log.js';
import { freePort, openSse, startTestPublisher } from '../../src/testing.js';

const packageDir = fileURLToPath(new URL('../..', import.meta.url));
/** The publisher as a direct child (not behind tsx's wrapper), so that SIGKILL reaches it. */
const cli = (flags: readonly string[]) => [process.execPath, ['--import', 'tsx', 'src/cli.ts', ...flags]] as const;
const TOKEN = 'durable-ingest-token-0123456789';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'durable-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const fileLog = (dataDir: string) => ['--log', 'file', '--data-dir', dataDir];

describe('the durable log across restarts', () => {
  it('continues numbering after a restart, serves the last element at once, and resumes a subscriber with no gap and no duplicate', async () => {
    const dataDir = scratch();
    const first = await startTestPublisher({ flags: fileLog(dataDir) });
    for (let index = 0; index < 3; index++) await first.push();
    const epoch = first.hub.log.epoch;
    await first.close();

    const second = await startTestPublisher({ flags: fileLog(dataDir) });
    cleanups.push(() => second.close());
    expect([second.hub.log.epoch, second.hub.log.latestSeq]).toEqual([epoch, 3]);
    // /latest serves the last durable element before anything new is published.
    const latest = await fetch(`${second.url}/streams/parking/latest`, { headers: { accept: 'application/n-quads', 'accept-encoding': 'identity' } });
    expect(latest.status).toBe(200);
    expect(latest.headers.get('etag')).toBe(`"${epoch}-3-nquads"`);
    expect(await latest.text()).toContain(`/elements/${epoch}-3>`);

    const resumed = await openSse(`${second.url}/streams/parking/events?format=ntriples`, { 'last-event-id': `${epoch}-1` });
    cleanups.push(() => resumed.close());
    await second.push();
    const events = await resumed.waitForEvents(3);
    expect(events.map((event) => event.id)).toEqual([`${epoch}-2`, `${epoch}-3`, `${epoch}-4`]);
    expect(resumed.response.headers['stream-gap']).toBeUndefined();
  });

  it('upgrades a data directory of log format version 2 (SSE frames) at start, keeping the epoch, the elements and their ids', async () => {
    const dataDir = scratch();
    const first = await startTestPublisher({ flags: fileLog(dataDir) });
    for (let index = 0; index < 3; index++) await first.push();
    const elements = await first.hub.log.read(1, 3);
    const epoch = first.hub.log.epoch;
    await first.close();
    // The same elements as a version 2 publisher wrote them.
    const streamDir = join(dataDir, 'streams', 'parking');
    rmSync(streamDir, { recursive: true });
    writeVersion2Log(streamDir, { epoch, pageElements: first.hub.log.pageElements }, elements);

    const second = await startTestPublisher({ flags: fileLog(dataDir) });
    cleanups.push(() => second.close());
    expect(JSON.parse(readFileSync(join(streamDir, 'log.json'), 'utf8'))).toMatchObject({ version: 3, epoch });
    expect([second.hub.log.epoch, second.hub.log.latestSeq]).toEqual([epoch, 3]);
    for (const format of formatNames) {
      const response = await fetch(`${second.url}/streams/parking/elements/${epoch}-2`, { headers: { accept: mediaTypes[format], 'accept-encoding': 'identity' } });
      expect(await response.text(), format).toBe(elements[1]!.documents[format].toString());
    }
    const resumed = await openSse(`${second.url}/streams/parking/events?format=ntriples`, { 'last-event-id': `${epoch}-1` });
    cleanups.push(() => resumed.close());
    const events = await resumed.waitForEvents(2);
    expect(events.map((event) => [event.id, `${event.data}\n`])).toEqual(
      elements.slice(1).map((element) => [`${epoch}-${element.seq}`, element.documents.ntriples.toString()]),
    );
  });

  it('a Last-Event-ID from another life of the log (data directory replaced) gets the explicit gap, even once the new log has passed its number', async () => {
    const first = await startTestPublisher({ flags: fileLog(scratch()) });
    for (let index = 0; index < 7; index++) await first.push();
    const oldEpoch = first.hub.log.epoch;
    await first.close();

    const second = await startTestPublisher({ flags: fileLog(scratch()) });
    cleanups.push(() => second.close());
    for (let index = 0; index < 9; index++) await second.push();
    const epoch = second.hub.log.epoch;
    expect(epoch).not.toBe(oldEpoch);

    const browser = await openSse(`${second.url}/streams/parking/events`, { 'last-event-id': `${oldEpoch}-7` });
    cleanups.push(() => browser.close());
    expect(browser.response.headers['stream-gap']).toBe(`epoch; requested=${oldEpoch}-7; oldest=${epoch}-1`);
    const [gap, firstReplayed] = await browser.waitForEvents(2);
    expect(gap).toMatchObject({ event: 'gap' });
    expect(JSON.parse(gap!.data)).toEqual({ requestedId: `${oldEpoch}-7`, oldestRetained: `${epoch}-1`, reason: 'epoch' });
    expect(firstReplayed?.id).toBe(`${epoch}-1`);
    // The old element's IRI never names a new element.
    const old = await fetch(`${second.url}/streams/parking/elements/${oldEpoch}-7`);
    expect(old.status).toBe(410);
    expect((await readProblem(old)).code).toBe('PUB_ERR_ELEMENT_GONE');
  });

  it('serves retained elements as immutable, and 410 once retention removed them', async () => {
    const running = await startTestPublisher({ flags: [...fileLog(scratch()), '--page-elements', '2', '--retained-elements', '2'] });
    cleanups.push(() => running.close());
    for (let index = 0; index < 5; index++) await running.push();
    await running.hub.log.applyRetention();
    const { epoch } = running.hub.log;
    expect(running.hub.log.oldestSeq).toBe(3);
    const element = await fetch(`${running.url}/streams/parking/elements/${epoch}-4`, { headers: { accept: 'text/turtle' } });
    expect(element.status).toBe(200);
    expect(element.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(element.headers.get('etag')).toBe(`"${epoch}-4-turtle"`);
    const removed = await fetch(`${running.url}/streams/parking/elements/${epoch}-2`);
    expect(removed.status).toBe(410);
    const future = await fetch(`${running.url}/streams/parking/elements/${epoch}-99`);
    expect(future.status).toBe(404);
  });
});

describe('a full disk', () => {
  it('answers ingest with 503 and a stable code, shows the stream degraded, serves nothing half-written, and resumes when space returns', async () => {
    const disk = mountSmallFilesystem(512);
    cleanups.push(() => disk.unmount());
    const running = await startTestPublisher({ config: `streams:\n  - id: sensors\n    title: Sensors\n    shape: none\n    source: { kind: ingest, tokenEnv: TOKEN }\n`, env: { TOKEN }, flags: ['--data-dir', disk.path] });
    cleanups.push(() => running.close());
    const post = (value: number) =>
      fetch(`${running.url}/streams/sensors`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/turtle' },
        // 20 kB that do not compress: the element needs new pages of the file system.
        body: `<o> a <http://www.w3.org/ns/sosa/Observation>; <http://www.w3.org/ns/sosa/hasSimpleResult> "${value} ${randomBytes(15_000).toString('base64')}".`,
      });
    expect((await post(1)).status).toBe(201);
    const filler = join(disk.path, 'filler');
    fillDisk(filler);
    const refused = await post(2);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect((await readProblem(refused)).code).toBe('PUB_ERR_LOG_UNAVAILABLE');
    const health = (await (await fetch(`${running.url}/health`)).json()) as { streams: { sensors: { latestSeq: number; source: { state: string; detail: string } } } };
    expect(health.streams.sensors.latestSeq).toBe(1);
    expect(health.streams.sensors.source).toMatchObject({ state: 'degraded', detail: expect.stringContaining('ENOSPC') });
    const latest = await fetch(`${running.url}/streams/sensors/latest`, { headers: { accept: 'application/n-quads' } });
    expect(await latest.text()).toMatch(/"1 [A-Za-z0-9+/=]{20000}"/);

    rmSync(filler);
    const accepted = await post(3);
    expect(accepted.status).toBe(201);
    expect(((await accepted.json()) as { seq: number }).seq).toBe(2);
  });
});

describe('start-up refusals (exit code 2, a clear message)', () => {
  async function start(flags: readonly string[], env: Record<string, string> = {}) {
    const child = spawn(...cli(['--log-level', 'info', ...flags]), { cwd: packageDir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.push(() => child.kill('SIGKILL'));
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    return { child, output: () => output };
  }

  it('a data directory in use by another running publisher', async () => {
    const dataDir = scratch();
    const holder = await startTestPublisher({ flags: fileLog(dataDir) });
    cleanups.push(() => holder.close());
    // The holder runs in this (test) process: the lock names its pid.
    const { child, output } = await start(['--port', String(await freePort()), '--data-dir', dataDir]);
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(output()).toMatch(/data directory .* is in use by another publisher \(pid \d+/);
  });

  it('a data directory that cannot be written (read-only file system)', async () => {
    const disk = mountSmallFilesystem(64, { readOnly: true });
    cleanups.push(() => disk.unmount());
    const { child, output } = await start(['--port', String(await freePort()), '--data-dir', disk.path]);
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(output()).toMatch(/not writable: EROFS/);
  });

  it('a log of an incompatible format', async () => {
    const dataDir = scratch();
    const streamDir = join(dataDir, 'streams', 'parking');
    rmSync(streamDir, { recursive: true, force: true });
    await import('node:fs').then((fs) => fs.mkdirSync(streamDir, { recursive: true }));
    writeFileSync(join(streamDir, 'log.json'), JSON.stringify({ format: 'rdf-stream-log', version: 99 }));
    const { child, output } = await start(['--port', String(await freePort()), '--data-dir', dataDir]);
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(output()).toContain(`${join(streamDir, 'log.json')} has format version 99; this publisher reads version 3 and upgrades versions 1 and 2. Use the publisher that wrote it, or another --data-dir`);
  });
});

describe('kill -9 during steady ingest', () => {
  it('keeps every acknowledged element exactly once, continues the numbering, and a resuming client sees no gap and no duplicate; Idempotency-Keys survive it', async () => {
    const dir = scratch();
    const configFile = join(dir, 'ingest.yaml');
    writeFileSync(configFile, `streams:\n  - id: sensors\n    title: Sensors\n    shape: none\n    source: { kind: ingest, tokenEnv: INGEST_TOKEN }\n`);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const launch = async (): Promise<ChildProcess> => {
      const child = spawn(...cli(['--config', configFile, '--port', String(port), '--data-dir', join(dir, 'data'), '--log-level', 'info']), {
        cwd: packageDir,
        env: { ...process.env, INGEST_TOKEN: TOKEN },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      cleanups.push(() => child.kill('SIGKILL'));
      let output = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', () => /"msg":"publishing /.test(output) && resolve());
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
      });
      return child;
    };
    const publisher = await launch();

    const agent = new Agent({ connections: 8 });
    cleanups.push(() => agent.close());
    const acknowledged = new Map<string, string>();
    const subscriber = await openSse(`${base}/streams/sensors/events?format=ntriples`);
    cleanups.push(() => subscriber.close());

    // Eight clients POST in a loop, each element with an Idempotency-Key of its own (its value);
    // the publisher is killed once 60 elements are acknowledged.
    let killed = false;
    const statuses: number[] = [];
    const unanswered: string[] = [];
    // As an ingest client does: a request the publisher sheds under pressure (503
    // PUB_ERR_OVERLOADED, as on a busy CI machine) is sent again with its key after Retry-After,
    // a few times at most; any other answer is the test's.
    const send = async (value: string) => {
      for (let attempt = 1; ; attempt++) {
        const response = await request(`${base}/streams/sensors`, {
          dispatcher: agent,
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/turtle', 'idempotency-key': value.replaceAll(' ', '-') },
          body: `<o> a <http://www.w3.org/ns/sosa/Observation>; <http://www.w3.org/ns/sosa/hasSimpleResult> "${value}".`,
        });
        const body = await response.body.text();
        if (response.statusCode === 503 && attempt < 4 && (JSON.parse(body) as { code?: string }).code === 'PUB_ERR_OVERLOADED') {
          await delay(Number(response.headers['retry-after'] ?? 1) * 1000);
          continue;
        }
        return { status: response.statusCode, id: response.statusCode === 201 ? (JSON.parse(body) as { id: string }).id : undefined, replayed: response.headers['idempotent-replayed'] === 'true' };
      }
    };
    const client = async (name: number) => {
      // Bounded: 200 requests per client at most, whatever happens.
      for (let index = 0; !killed && index < 200; index++) {
        const value = `client ${name} element ${index}`;
        try {
          const { status, id } = await send(value);
          statuses.push(status);
          if (id !== undefined) acknowledged.set(id, value);
          else unanswered.push(value);
        } catch {
          // The connection died with the publisher: this element was never acknowledged.
          unanswered.push(value);
        }
        if (acknowledged.size >= 60 && !killed) {
          killed = true;
          publisher.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, name) => client(name)));
    expect(killed, `statuses: ${[...new Set(statuses)].join(', ')}`).toBe(true);
    if (publisher.exitCode === null && publisher.signalCode === null) await once(publisher, 'exit');
    await subscriber.ended.catch(() => undefined);
    const lastSeen = subscriber.events.at(-1)?.id;

    const restartedAt = Date.now();
    await launch();
    const recoveryMs = Date.now() - restartedAt;
    expect(recoveryMs).toBeGreaterThan(0);

    // Sent again with their keys: an acknowledged request gets its element as a replay; one that
    // got no answer gets the element stored before the kill (a replay), or is stored now.
    const acknowledgedBeforeRestart = new Map(acknowledged);
    for (const [id, value] of acknowledgedBeforeRestart) expect(await send(value), value).toEqual({ status: 201, id, replayed: true });
    for (const value of unanswered) {
      const { status, id } = await send(value);
      expect(status, value).toBe(201);
      acknowledged.set(id!, value);
    }
    // Every acknowledged element is there, once, with its content.
    for (const [id, value] of acknowledged) {
      const element = await fetch(`${base}/streams/sensors/elements/${id}`, { headers: { accept: 'application/n-triples' } });
      expect(element.status, id).toBe(200);
      expect(await element.text(), id).toContain(`"${value}"`);
    }
    const seqs = [...acknowledged.keys()].map((id) => Number(id.split('-')[1]));
    const latestSeq = ((await (await fetch(`${base}/health`)).json()) as { streams: { sensors: { latestSeq: number } } }).streams.sensors.latestSeq;
    expect(latestSeq).toBeGreaterThanOrEqual(Math.max(...seqs));
    // No element was stored twice: every value the log holds, it holds once.
    const epoch = [...acknowledged.keys()][0]!.split('-')[0];
    const stored: string[] = [];
    for (let seq = 1; seq <= latestSeq; seq++) {
      const text = await (await fetch(`${base}/streams/sensors/elements/${epoch}-${seq}`, { headers: { accept: 'application/n-triples' } })).text();
      stored.push(/"(client \d+ element \d+)"/.exec(text)![1]!);
    }
    expect(stored.length - new Set(stored).size).toBe(0);
    expect(new Set(stored)).toEqual(new Set(acknowledged.values()));

    // A client resuming from its last id gets exactly what it missed, then the next element.
    const resumed = await openSse(`${base}/streams/sensors/events?format=ntriples`, lastSeen ? { 'last-event-id': lastSeen } : {});
    cleanups.push(() => resumed.close());
    const next = await fetch(`${base}/streams/sensors`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/turtle' },
      body: '<o> a <http://www.w3.org/ns/sosa/Observation>; <http://www.w3.org/ns/sosa/hasSimpleResult> "after the crash".',
    });
    const { seq: nextSeq, id: nextId } = (await next.json()) as { seq: number; id: string };
    expect(nextSeq).toBe(latestSeq + 1);
    const firstMissed = lastSeen === undefined ? 1 : Number(lastSeen.split('-')[1]) + 1;
    const events = await resumed.waitForEvents(nextSeq - firstMissed + 1);
    const ids = [...subscriber.events, ...events].map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(events.at(-1)?.id).toBe(nextId);
    expect(events.map((event) => Number(event.id!.split('-')[1]))).toEqual(Array.from({ length: nextSeq - firstMissed + 1 }, (_, index) => firstMissed + index));
  }, 90_000);
});

/** Appends to `file` until the file system has not one byte left. */
function fillDisk(file: string): void {
  writeFileSync(file, Buffer.alloc(0));
  for (const chunkBytes of [64 * 1024, 4096, 512, 1]) {
    try {
      for (;;) writeFileSync(file, Buffer.alloc(chunkBytes), { flag: 'a' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    }
  }
}
