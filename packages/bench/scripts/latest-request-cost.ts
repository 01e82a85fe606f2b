/**
 * What one `GET /streams/parking/latest` costs the publisher when it answers as fast as it can.
 * The publisher runs as the bench starts it (`PublisherProcess`, its log in a directory of its
 * own), and `--connections` keep-alive connections of this process send one request after the
 * other, each the next as soon as the last is answered: raw sockets, a client far cheaper than
 * the server, where autocannon is the bottleneck of the bench's throughput phase on our machine.
 * Reported: the publisher's CPU (every thread, `ProcessCpuClock`) per request over `--seconds`,
 * after 2 s of warm-up, and the requests per second. `--status 304` asks with the ETag of the
 * newest element the connection was sent (a revalidation; a 200 once per element), `200`
 * without (the whole element, Turtle, identity).
 *
 * An A/B: run it from each checkout in turn, interleaved, under `flock /tmp/bench.lock`.
 * Usage: pnpm exec tsx packages/bench/scripts/latest-request-cost.ts [--status 200|304] [--seconds 10] [--connections 64] [--port 18777]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { ProcessCpuClock } from '../src/collect/process-cpu-clock.js';
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

  /** The request a connection sends: for `304`, with the tag of the newest element it was sent. */
  const requestFor = (tag: string | null) =>
    Buffer.from(`GET /streams/parking/latest HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/turtle\r\n${values.status === '304' && tag !== null ? `If-None-Match: ${tag}\r\n` : ''}\r\n`);

  let answered = 0;
  let stopping = false;
  const sockets: Socket[] = [];
  for (let index = 0; index < Number(values.connections); index++) {
    let request = requestFor(etag);
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    socket.on('error', () => undefined);
    sockets.push(socket);
    let buffered: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffered.subarray(0, end).toString('latin1');
        const length = head.startsWith('HTTP/1.1 304') ? 0 : Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        buffered = buffered.subarray(end + 4 + length);
        if (head.startsWith('HTTP/1.1 200')) request = requestFor(/etag: (.+)/i.exec(head)?.[1] ?? null);
        answered++;
        if (!stopping) socket.write(request);
      }
    });
  }

  const clock = new ProcessCpuClock(publisher.pid);
  await sleep(2_000);
  const [cpuBefore, answeredBefore, startedAt] = [clock.readMs(), answered, performance.now()];
  await sleep(Number(values.seconds) * 1_000);
  const [cpuAfter, answeredAfter, endedAt] = [clock.readMs(), answered, performance.now()];
  stopping = true;
  for (const socket of sockets) socket.destroy();
  const requests = answeredAfter - answeredBefore;
  console.log(
    `${values.status}: ${(((cpuAfter - cpuBefore) * 1_000) / requests).toFixed(2)} µs of publisher CPU per request, ` +
      `${Math.round((requests * 1_000) / (endedAt - startedAt))} requests/s over ${values.connections} connections (${process.cwd()})`,
  );
} finally {
  await publisher.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
