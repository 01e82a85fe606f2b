import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { createGunzip } from 'node:zlib';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { request } from 'undici';
import WebSocket from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchOptions } from '../../src/scenario/bench-options.js';
import { startProxy, startPublisher, stopProxy } from '../../src/scenario/services.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** Requests the publisher on `port` answered on /latest, from its own metrics. */
async function publisherLatestRequests(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return [...text.matchAll(/^rdf_stream_http_requests_total\{route="\/streams\/:id\/latest",method="GET",status="\dxx"\} (\d+)$/gm)].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  );
}

// The proxies as the benchmark starts them (scripts/proxy.sh, from Debian's packages, with the
// configurations of docker/), each in front of its own publisher.
// Freshness as each sends it for /latest (docker/README.md): nginx would not lower max-age for a
// cached copy, so it sends Expires without Cache-Control; Varnish keeps Cache-Control and adds Age.
// Each test has its own publisher, proxy, ports and directory, and spends most of its time waiting
// for the next element: they run side by side.
describe.concurrent.each([
  { proxy: 'nginx', port: 18_960, freshness: 'expires' },
  { proxy: 'varnish', port: 18_970, freshness: 'cache-control' },
] as const)('polling through a real $proxy (docker/, scripts/proxy.sh)', ({ proxy, port, freshness }) => {
  const options = { port, intervalSeconds: 2, facilities: 13, seed: 1 } as BenchOptions;
  // Its own directory, which proxy.sh opens to the proxy's workers (a subdirectory of a private
  // mkdtemp directory would not be reachable by them).
  const proxyDir = mkdtempSync(join(tmpdir(), `${proxy}-`));
  dirs.push(proxyDir);
  const latestUrl = `http://127.0.0.1:${port + 1}/streams/parking/latest`;

  it('the publisher sees about one request per second and element while 50 clients poll every 50 ms', async () => {
    const publisher = await startPublisher(options, 100);
    try {
      await startProxy(proxy, `127.0.0.1:${port}`, port + 1, proxyDir);
      try {
        const before = await publisherLatestRequests(port);
        const statuses: string[] = [];
        const startedAt = Date.now();
        const durationMs = 6_000;
        // 50 clients, each a bounded loop: one request every 50 ms for 6 s.
        await Promise.all(
          Array.from({ length: 50 }, async () => {
            while (Date.now() - startedAt < durationMs) {
              const response = await request(latestUrl, { headers: { accept: 'text/turtle' } });
              await response.body.text();
              statuses.push(`${response.statusCode} ${String(response.headers['x-cache-status'])}`);
              await new Promise((resolve) => setTimeout(resolve, 50));
            }
          }),
        );
        const elapsedSeconds = (Date.now() - startedAt) / 1000;
        const reached = (await publisherLatestRequests(port)) - before;
        expect(statuses.length).toBeGreaterThan(1_000);
        expect(reached).toBeGreaterThan(0);
        // Per second at most one fetch of the fragment (1 s micro-cache or max-age), plus one per new element.
        expect(reached).toBeLessThanOrEqual(Math.ceil(elapsedSeconds) + Math.ceil(elapsedSeconds / options.intervalSeconds) + 2);
        expect(statuses.filter((status) => !status.startsWith('200 '))).toEqual([]);
        // Answered from the cache: a fresh copy (HIT), or the last one while the proxy fetches the
        // next (Varnish's grace, STALE; nginx's proxy_cache_use_stale updating, UPDATING), which
        // a slow publisher on a busy machine makes more frequent. The others went to the publisher.
        const counts = new Map<string, number>();
        for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
        const tally = [...counts].map(([status, count]) => `${status}: ${count}`).join(', ');
        const fromCache = statuses.filter((status) => ['200 HIT', '200 STALE', '200 UPDATING'].includes(status)).length;
        expect(fromCache / statuses.length, tally).toBeGreaterThan(0.95);
        expect(statuses.length - fromCache, tally).toBeLessThanOrEqual(reached);

        // The publisher's validators reach the client, and revalidation through the cache works.
        const first = await request(latestUrl, { headers: { accept: 'text/turtle' } });
        await first.body.text();
        const etag = String(first.headers.etag);
        expect(etag).toMatch(/^(W\/)?"/);
        if (freshness === 'expires') {
          expect(Date.parse(String(first.headers.expires))).not.toBeNaN();
          expect(first.headers['cache-control']).toBeUndefined();
        } else {
          expect(String(first.headers['cache-control'])).toMatch(/max-age=\d+/);
          expect(Number(first.headers.age)).toBeGreaterThanOrEqual(0);
        }
        const revalidated = await request(latestUrl, { headers: { accept: 'text/turtle', 'if-none-match': etag } });
        await revalidated.body.text();
        // 304 while the element is the same; 200 with another ETag if one was published meanwhile.
        if (revalidated.statusCode === 200) expect(String(revalidated.headers.etag)).not.toBe(etag);
        else expect(revalidated.statusCode).toBe(304);
      } finally {
        await stopProxy(proxy, proxyDir);
      }
    } finally {
      await publisher.stop();
    }
  }, 60_000);

  it.each(['events?format=turtle', 'patches'])('passes the event stream /%s through as the publisher sends it: gzip, each event before the next is published', async (feed) => {
    const publisherPort = port + (feed === 'patches' ? 7 : 5);
    const proxyPort = publisherPort + 1;
    const publisher = await startPublisher({ ...options, port: publisherPort, intervalSeconds: 3 } as BenchOptions, 10);
    const sseDir = mkdtempSync(join(tmpdir(), `${proxy}-sse-`));
    dirs.push(sseDir);
    try {
      await startProxy(proxy, `127.0.0.1:${publisherPort}`, proxyPort, sseDir);
      const stream = await openEvents(`http://127.0.0.1:${proxyPort}/streams/parking/${feed}`, { 'accept-encoding': 'gzip, deflate, br' });
      try {
        // Not buffered: when an event comes out of the proxy, it is still the publisher's latest
        // element (the next one is 3 s away); a buffering proxy would hold it back.
        expect(stream.headers['content-encoding']).toBe('gzip');
        for (let count = 1; count <= 2; count++) {
          const event = await stream.event(count);
          const health = (await (await fetch(`http://127.0.0.1:${publisherPort}/health`)).json()) as { streams: Record<string, { latestSeq: number }> };
          expect(Number(event.id!.split('-')[1])).toBe(health.streams['parking']!.latestSeq);
          if (feed === 'patches') expect(event.data).toMatch(/^H id <[^>]+> \.\nH prev <[^>]+> \.\nTX \.\n/);
        }
      } finally {
        stream.close();
        await stopProxy(proxy, sseDir);
      }
    } finally {
      await publisher.stop();
    }
  }, 60_000);

  it('passes the data WebSocket through: the upgrade, permessage-deflate, each element before the next is published', async () => {
    const publisherPort = port + 3;
    const proxyPort = publisherPort + 1;
    const publisher = await startPublisher({ ...options, port: publisherPort, intervalSeconds: 3 } as BenchOptions, 10);
    const wsDir = mkdtempSync(join(tmpdir(), `${proxy}-ws-`));
    dirs.push(wsDir);
    try {
      await startProxy(proxy, `127.0.0.1:${publisherPort}`, proxyPort, wsDir);
      const socket = new WebSocket(`ws://127.0.0.1:${proxyPort}/streams/parking/ws?format=turtle`, { perMessageDeflate: true });
      const messages: string[] = [];
      const waiters: Array<() => void> = [];
      socket.on('message', (data) => {
        messages.push(String(data));
        waiters.splice(0).forEach((wake) => wake());
      });
      const message = (count: number) =>
        new Promise<string>((resolve) => {
          const check = () => (messages.length >= count ? resolve(messages[count - 1]!) : waiters.push(check));
          check();
        });
      try {
        await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
        // The publisher's compression reached the client through the proxy.
        expect(socket.extensions).toContain('permessage-deflate');
        for (let count = 1; count <= 2; count++) {
          const [head, ...body] = (await message(count)).split('\n');
          const health = (await (await fetch(`http://127.0.0.1:${publisherPort}/health`)).json()) as { streams: Record<string, { latestSeq: number }> };
          // Not buffered: the element that came out of the proxy is still the publisher's latest.
          expect(head).toMatch(/^element [a-z0-9]+-\d+$/);
          expect(Number(head!.split('-').at(-1))).toBe(health.streams['parking']!.latestSeq);
          expect(body.join('\n')).toContain('sosa:');
        }
      } finally {
        socket.terminate();
        await stopProxy(proxy, wsDir);
      }
    } finally {
      await publisher.stop();
    }
  }, 60_000);
});

/** An event stream read with node:http, decoding gzip as it arrives; `event(n)` waits for the n-th element. */
function openEvents(url: string, headers: Record<string, string>) {
  return new Promise<{ headers: Record<string, unknown>; event(count: number): Promise<EventSourceMessage>; close(): void }>((resolve, reject) => {
    const req = httpRequest(url, { headers: { accept: 'text/event-stream', ...headers } }, (response) => {
      const events: EventSourceMessage[] = [];
      const waiters: Array<() => void> = [];
      const parser = createParser({
        onEvent: (event) => {
          if (event.event === undefined) events.push(event);
          waiters.splice(0).forEach((wake) => wake());
        },
      });
      const body = response.headers['content-encoding'] === 'gzip' ? response.pipe(createGunzip()) : response;
      body.setEncoding('utf8').on('data', (text: string) => parser.feed(text));
      resolve({
        headers: response.headers,
        event: (count) =>
          new Promise((resolveEvent) => {
            const check = () => (events.length >= count ? resolveEvent(events[count - 1]!) : waiters.push(check));
            check();
          }),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}
