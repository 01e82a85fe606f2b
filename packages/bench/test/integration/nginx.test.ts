import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchOptions } from '../../src/scenario/bench-options.js';
import { startProxy, startPublisher, stopProcess, stopProxy } from '../../src/scenario/services.js';

const dir = mkdtempSync(join(tmpdir(), 'nginx-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const options = { port: 18_960, intervalSeconds: 2, facilities: 13, seed: 1 } as BenchOptions;

/** Requests the publisher answered on /latest, from its own metrics. */
async function publisherLatestRequests(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${options.port}/metrics`)).text();
  return [...text.matchAll(/^rdf_stream_http_requests_total\{route="\/streams\/:id\/latest",method="GET",status="\dxx"\} (\d+)$/gm)].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  );
}

describe('polling through a real nginx (docker/nginx/nginx.conf.template, scripts/proxy.sh)', () => {
  it('the publisher sees about one request per second and element while 50 clients poll every 50 ms', async () => {
    const publisher = await startPublisher(options, 100);
    try {
      await startProxy('nginx', `127.0.0.1:${options.port}`, options.port + 1, dir);
      try {
        const url = `http://127.0.0.1:${options.port + 1}/streams/parking/latest`;
        const before = await publisherLatestRequests();
        const statuses: string[] = [];
        const startedAt = Date.now();
        const durationMs = 6_000;
        // 50 clients, each a bounded loop: one request every 50 ms for 6 s.
        await Promise.all(
          Array.from({ length: 50 }, async () => {
            while (Date.now() - startedAt < durationMs) {
              const response = await request(url, { headers: { accept: 'text/turtle' } });
              await response.body.text();
              statuses.push(`${response.statusCode} ${String(response.headers['x-cache-status'])}`);
              await new Promise((resolve) => setTimeout(resolve, 50));
            }
          }),
        );
        const elapsedSeconds = (Date.now() - startedAt) / 1000;
        const reached = (await publisherLatestRequests()) - before;
        expect(statuses.length).toBeGreaterThan(1_000);
        expect(reached).toBeGreaterThan(0);
        // Per second at most one fetch of the fragment (1 s micro-cache or max-age), plus one per new element.
        expect(reached).toBeLessThanOrEqual(Math.ceil(elapsedSeconds) + Math.ceil(elapsedSeconds / options.intervalSeconds) + 2);
        expect(statuses.filter((status) => !status.startsWith('200 '))).toEqual([]);
        expect(statuses.filter((status) => status === '200 HIT').length / statuses.length).toBeGreaterThan(0.95);
      } finally {
        await stopProxy('nginx', dir);
      }
    } finally {
      await stopProcess(publisher);
    }
  }, 60_000);
});
