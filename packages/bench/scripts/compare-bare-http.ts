/**
 * Throughput of GET /streams/parking/latest (Turtle) against a bare node:http server returning
 * the same bytes and headers, both measured by autocannon in the same run with the same
 * settings, in alternating rounds (publisher, bare, publisher, bare, …) so that drifts of a
 * shared machine hit both alike; the summary gives each round and the medians.
 * Usage: pnpm exec tsx packages/bench/scripts/compare-bare-http.ts [--connections 400] [--duration 30] [--rounds 2]
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { PublisherProcess } from '../src/process/publisher-process.js';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '400' },
    duration: { type: 'string', default: '30' },
    port: { type: 'string', default: '18480' },
    rounds: { type: 'string', default: '2' },
  },
});
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const duration = Number(values.duration);
const publisherPort = Number(values.port);
const barePort = publisherPort + 1;
const path = '/streams/parking/latest';

async function measure(name: string, url: string) {
  process.stdout.write(`${name}: autocannon ${connections} connections, ${duration} s, keep-alive … `);
  const result = await autocannon({ url, connections, duration, headers: { accept: 'text/turtle' } });
  const summary = {
    requestsPerSecond: Math.round(result.requests.average),
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    bodyBytes: Math.round(result.throughput.average / Math.max(1, result.requests.average)),
  };
  process.stdout.write(`${summary.requestsPerSecond} req/s\n`);
  return summary;
}

// Its log on disk, as by default, in a directory of its own.
const dataDir = mkdtempSync(join(tmpdir(), 'compare-bare-http-'));
const publisher = await PublisherProcess.start({ port: publisherPort, flags: ['--interval', '5', '--data-dir', dataDir] });
try {
  const sample = await fetch(`http://127.0.0.1:${publisherPort}${path}`, { headers: { accept: 'text/turtle', 'accept-encoding': 'identity' } });
  const body = Buffer.from(await sample.arrayBuffer());
  const headers = Object.fromEntries(
    [...sample.headers].filter(([name]) => !['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(name)),
  );

  const bare = fork(new URL('./bare-http-server.ts', import.meta.url), [String(barePort)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  bare.send({ body: body.toString('base64'), headers });
  await once(bare, 'message');
  const results: { publisher: Awaited<ReturnType<typeof measure>>[]; bare: Awaited<ReturnType<typeof measure>>[] } = {
    publisher: [],
    bare: [],
  };
  for (let round = 1; round <= rounds; round++) {
    results.publisher.push(await measure(`round ${round}, publisher`, `http://127.0.0.1:${publisherPort}${path}`));
    results.bare.push(await measure(`round ${round}, bare node:http`, `http://127.0.0.1:${barePort}${path}`));
  }
  bare.kill();

  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  };
  const publisherMedian = median(results.publisher.map((r) => r.requestsPerSecond));
  const bareMedian = median(results.bare.map((r) => r.requestsPerSecond));
  console.log(
    JSON.stringify(
      {
        node: process.version,
        connections,
        durationSeconds: duration,
        rounds,
        bodyBytes: body.length,
        publisher: results.publisher,
        bare: results.bare,
        medianRequestsPerSecond: { publisher: publisherMedian, bare: bareMedian },
        ratio: Number((publisherMedian / bareMedian).toFixed(3)),
      },
      null,
      2,
    ),
  );
} finally {
  await publisher.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
