import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { elementIds, manualClock, openSse, type SseConnection, startTestPublisher, type TestPublisher } from '../../src/testing.js';
import { openWs } from '../support/ws-client.js';

/** The testing entry (`@rdf-stream/publisher/testing`) as a user of the package starts it. */

let running: TestPublisher | undefined;
const connections: Array<{ close(): void }> = [];
afterEach(async () => {
  for (const connection of connections.splice(0)) connection.close();
  await running?.close();
  running = undefined;
});

const sse = async (url: string, headers: Record<string, string> = {}): Promise<SseConnection> => {
  const connection = await openSse(url, headers);
  connections.push(connection);
  return connection;
};

describe('startTestPublisher', () => {
  it('listens on 127.0.0.1 on a port the system picked, named in the stream IRI, and serves what push publishes', async () => {
    running = await startTestPublisher();
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
    expect(running.streamUrl).toBe(`${running.url}/streams/parking`);
    expect(await running.push([7, 8])).toBe(1);
    const latest = await fetch(`${running.streamUrl}/latest`, { headers: { accept: 'application/n-triples' } });
    expect(latest.status).toBe(200);
    const triples = await latest.text();
    expect(triples).toContain(`<${running.streamUrl}/sensors/p2>`);
    expect(triples).toMatch(/"8"\^\^<http:\/\/www\.w3\.org\/2001\/XMLSchema#integer>/);
  });

  it('counts push subscribers as they come and go, by transport, and resolves untilSubscribers on the change', async () => {
    running = await startTestPublisher();
    let two = false;
    const reachedTwo = running.untilSubscribers(2).then(() => (two = true));
    const events = await sse(`${running.streamUrl}/events`);
    await running.untilSubscribers(1);
    expect(two).toBe(false);
    expect(running.subscribers({ transport: 'sse' })).toBe(1);
    const socket = await openWs(`${running.streamUrl.replace(/^http/, 'ws')}/ws`);
    connections.push(socket);
    await reachedTwo;
    expect(running.subscribers({ transport: 'websocket' })).toBe(1);
    events.close();
    await running.untilSubscribers(0, { transport: 'sse' });
    expect(running.subscribers()).toBe(1);
    socket.close();
    await running.untilSubscribers(0);
  });

  it('resolves untilWaiting when a long-poll request is held, and again when push answers it', async () => {
    running = await startTestPublisher();
    await running.push();
    const url = `${running.streamUrl}/latest`;
    const etag = (await fetch(url)).headers.get('etag')!;
    const held = fetch(url, { headers: { 'if-none-match': etag, prefer: 'wait=20' } });
    await running.untilWaiting(1);
    await running.push();
    expect((await held).status).toBe(200);
    await running.untilWaiting(0);
  });

  it('runs the simulator on a manual clock: one element at start, one more each time the test advances an interval', async () => {
    const time = manualClock();
    running = await startTestPublisher({ source: 'simulator', clock: time.clock, intervalMs: 1_000 });
    const epoch = running.hub.log.epoch;
    expect((await fetch(`${running.streamUrl}/latest`)).headers.get('etag')).toContain(`${epoch}-1`);
    const events = await sse(`${running.streamUrl}/events`);
    await running.untilSubscribers(1);
    time.advanceBy(1_000);
    time.advanceBy(1_000);
    expect(elementIds(await events.waitForEvents(2))).toEqual([`${epoch}-2`, `${epoch}-3`]);
    expect(time.pending()).toBe(1);
  });

  it("keeps a file log's stream, epoch and port across restart", async () => {
    running = await startTestPublisher({ log: 'file' });
    await running.push();
    await running.push();
    const { url } = running;
    const epoch = running.hub.log.epoch;
    await running.restart();
    expect(running.url).toBe(url);
    expect(running.hub.log.epoch).toBe(epoch);
    expect(await running.push()).toBe(3);
    const latest = await fetch(`${running.streamUrl}/latest`);
    expect(latest.headers.get('etag')).toContain(`${epoch}-3`);
  });

  it('serves the streams a configuration file declares, with files beside it and the environment it reads', async () => {
    running = await startTestPublisher({
      config: 'streams:\n  - id: sensors\n    title: Pushed\n    shape: none\n    source: { kind: ingest, tokenEnv: TOKEN }\n  - id: air\n    title: Replayed\n    source: { kind: replay, file: air.trig }\n',
      files: { 'air.trig': readFileSync(new URL('../../../../ontologies/examples/air-quality-recording.trig', import.meta.url), 'utf8') },
      env: { TOKEN: 'token-0123456789abcdef0123456789' },
    });
    expect(running.streamUrl).toBe(`${running.url}/streams/sensors`);
    const health = (await (await fetch(`${running.url}/health`)).json()) as { streams: Record<string, { source: { kind: string } }> };
    expect(Object.fromEntries(Object.entries(health.streams).map(([id, stream]) => [id, stream.source.kind]))).toEqual({ sensors: 'ingest', air: 'replay' });
    const refused = await fetch(running.streamUrl, { method: 'POST', headers: { authorization: 'Bearer wrong', 'content-type': 'text/turtle' }, body: '' });
    expect(refused.status).toBe(401);
  });
});
