/**
 * Throughput of GET /streams/parking/latest (Turtle) against a bare node:http server returning
 * the same bytes and headers, both measured by autocannon in the same run with the same
 * settings. Usage: tsx scripts/compare-bare-http.ts [--connections 400] [--duration 30]
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { spawnPublisher, stopProcess } from './spawn-publisher.js';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '400' },
    duration: { type: 'string', default: '30' },
    port: { type: 'string', default: '18480' },
  },
});
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

const publisher = await spawnPublisher(['--port', String(publisherPort), '--interval', '5']);
try {
  const sample = await fetch(`http://127.0.0.1:${publisherPort}${path}`, { headers: { accept: 'text/turtle', 'accept-encoding': 'identity' } });
  const body = Buffer.from(await sample.arrayBuffer());
  const headers = Object.fromEntries(
    [...sample.headers].filter(([name]) => !['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(name)),
  );

  const publisherResult = await measure('publisher', `http://127.0.0.1:${publisherPort}${path}`);

  const bare = fork(new URL('./bare-http-server.ts', import.meta.url), [String(barePort)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  bare.send({ body: body.toString('base64'), headers });
  await once(bare, 'message');
  const bareResult = await measure('bare node:http', `http://127.0.0.1:${barePort}${path}`);
  bare.kill();

  const ratio = publisherResult.requestsPerSecond / bareResult.requestsPerSecond;
  console.log(
    JSON.stringify(
      { node: process.version, connections, durationSeconds: duration, bodyBytes: body.length, publisher: publisherResult, bare: bareResult, ratio: Number(ratio.toFixed(3)) },
      null,
      2,
    ),
  );
} finally {
  await stopProcess(publisher);
}
