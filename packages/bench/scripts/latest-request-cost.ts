/**
 * What one `GET /streams/parking/latest` costs the publisher when it answers as fast as it can.
 * The publisher runs as the bench starts it (`PublisherProcess`, its log in a directory of its
 * own), and `--connections` keep-alive connections of this process send one request after the
 * other, each the next as soon as the last is answered: the fleet's `LeanHttpConnection`, a
 * client far cheaper than the server, where autocannon is the bottleneck of the bench's
 * throughput phase on our machine.
 * Reported: the publisher's CPU (every thread, `ProcessCpuClock`) per request over `--seconds`,
 * after 2 s of warm-up, and the requests per second. `--status 304` asks with the ETag of the
 * newest element the connection was sent (a revalidation; a 200 once per element), `200`
 * without (the whole element, Turtle, identity).
 *
 * An A/B: run it from each checkout in turn, interleaved, under `flock /tmp/bench.lock`.
 * Usage: pnpm exec tsx packages/bench/scripts/latest-request-cost.ts [--status 200|304] [--seconds 10] [--connections 64] [--port 18777]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { ProcessCpuClock } from '../src/collect/process-cpu-clock.js';
import { LeanHttpConnection } from '../src/fleet/lean-http-connection.js';
import { PublisherProcess } from '../src/process/publisher-process.js';

const { values } = parseArgs({
  options: {
    status: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    port: { type: 'string', default: '18777' },
  },
});
if (values.status !== '200' && values.status !== '304') throw new Error('--status is 200 or 304');
const port = Number(values.port);
const dataDir = mkdtempSync(join(tmpdir(), 'latest-request-cost-'));
const publisher = await PublisherProcess.start({ port, flags: ['--interval', '5', '--data-dir', dataDir] });
try {
  const latestUrl = `http://127.0.0.1:${port}/streams/parking/latest`;
  let etag: string | null = null;
  for (const deadline = Date.now() + 60_000; etag === null; ) {
    if (Date.now() > deadline) throw new Error(`no element at ${latestUrl} within 60 s`);
    const response = await fetch(latestUrl, { headers: { accept: 'text/turtle', 'accept-encoding': 'identity' } });
    if (response.status === 200) etag = response.headers.get('etag');
    await response.arrayBuffer();
    if (etag === null) await sleep(250);
  }

  let answered = 0;
  let stopping = false;
  const sockets: Socket[] = [];
  /** One connection's requests, each sent as soon as the last is answered; for `304`, with the tag of the newest element it was sent. */
  const poll = async () => {
    const connection = new LeanHttpConnection(new URL(latestUrl), undefined, (socket) => sockets.push(socket));
    let tag = etag as string;
    while (!stopping) {
      const headers: Record<string, string> = values.status === '304' ? { accept: 'text/turtle', 'if-none-match': tag } : { accept: 'text/turtle' };
      const response = await connection.request({ path: '/streams/parking/latest', method: 'GET', headers, headersTimeout: 10_000, bodyTimeout: 10_000 });
      if (response.statusCode === 200) tag = response.headers.etag ?? tag;
      answered++;
    }
  };
  /** Connections that failed (a failed request ends its connection's polling): the figures are then not the publisher's. */
  const failures: unknown[] = [];
  const polling = Array.from({ length: Number(values.connections) }, () => poll().catch((error: unknown) => failures.push(error)));

  const clock = new ProcessCpuClock(publisher.pid);
  await sleep(2_000);
  const [cpuBefore, answeredBefore, startedAt] = [clock.readMs(), answered, performance.now()];
  await sleep(Number(values.seconds) * 1_000);
  const [cpuAfter, answeredAfter, endedAt] = [clock.readMs(), answered, performance.now()];
  stopping = true;
  await Promise.all(polling);
  for (const socket of sockets) socket.destroy();
  if (failures.length > 0) throw new Error(`${failures.length} of ${values.connections} connections failed`, { cause: failures[0] });
  const requests = answeredAfter - answeredBefore;
  console.log(
    `${values.status}: ${(((cpuAfter - cpuBefore) * 1_000) / requests).toFixed(2)} µs of publisher CPU per request, ` +
      `${Math.round((requests * 1_000) / (endedAt - startedAt))} requests/s over ${values.connections} connections (${process.cwd()})`,
  );
} finally {
  await publisher.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
