/**
 * What one check of the kernel send queues costs with N connections: `SendProgressMonitor` over
 * `/proc/net/tcp{,6}` (one read and one parse per check, every socket's counters read in
 * slices), `SendProgressMonitor` reading each socket with `ioctl(SIOCOUTQ)` (through koffi,
 * where it loads), and `ss` (netlink sock_diag, the kernel filtering by port) run once per check.
 *
 * A child process opens N connections to this process's server and never reads; the server
 * writes 20 kB to half of them (a non-empty kernel queue) and watches every accepted socket.
 * Before each check every socket is written 100 bytes, as by a broadcast (a check skips the
 * snapshot while every connection is idle: measured apart). Reported per check: wall time, this process's CPU (user + system; the kernel's work to print
 * the table counts as system time), and for `ss` the child's CPU as well.
 * Then a second child opens N connections that read everything: the check of connections that
 * are all idle (a quiet stream between two elements), when their writes are not reported (each
 * one's counters read) and when they are (`writesReported`: none visited).
 * Usage: tsx scripts/send-queue-check-cost.ts [--connections 10000] [--checks 20]
 */
import { execFile, fork } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { ProcNetTcpSendQueues } from '../src/publish/sse/kernel-send-queues.js';
import { SendProgressMonitor } from '../src/publish/sse/send-progress-monitor.js';
import { socketSendQueue } from '../src/publish/sse/socket-send-queue.js';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '10000' },
    checks: { type: 'string', default: '20' },
    port: { type: 'string', default: '18400' },
    client: { type: 'boolean', default: false },
    read: { type: 'boolean', default: false },
  },
});
const connections = Number(values.connections);
const port = Number(values.port);

if (values.client) {
  const sockets: Socket[] = [];
  let connected = 0;
  for (let index = 0; index < connections; index++) {
    const socket = connect(port, '127.0.0.1', () => connected++);
    socket.on('error', () => undefined);
    if (values.read) socket.on('data', () => undefined);
    else socket.pause();
    sockets.push(socket);
    if (index % 200 === 199) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const deadline = Date.now() + 30_000;
  while (connected < connections && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  process.send?.(connected);
  await once(process, 'disconnect');
  for (const socket of sockets) socket.destroy();
  process.exit(0);
}

/** N connections from a child process to a server of this one, once all are accepted; `reading`: the child reads everything. */
async function openConnections(serverPort: number, reading: boolean) {
  const accepted: Socket[] = [];
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    if (!reading && accepted.length % 2 === 0) socket.write(Buffer.alloc(20_000));
    accepted.push(socket);
  });
  server.listen({ port: serverPort, host: '127.0.0.1', backlog: 4096 });
  await once(server, 'listening');
  const child = fork(new URL(import.meta.url), ['--client', '--connections', String(connections), '--port', String(serverPort), ...(reading ? ['--read'] : [])], { execArgv: process.execArgv });
  const [connected] = (await once(child, 'message')) as [number];
  while (accepted.length < connected) await new Promise((resolve) => setTimeout(resolve, 50));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const close = () => {
    child.disconnect();
    for (const socket of accepted) socket.destroy();
    server.close();
  };
  return { accepted, close };
}

const { accepted, close } = await openConnections(port, false);

const manual = { now: () => performance.now(), setTimeout: () => undefined, clearTimeout: () => undefined };
const monitor = new SendProgressMonitor(1_000, new ProcNetTcpSendQueues(), manual);
const perSocket = socketSendQueue('auto');
const ioctlMonitor = new SendProgressMonitor(1_000, new ProcNetTcpSendQueues(), manual, undefined, perSocket);
let exceeded = 0;
for (const socket of accepted) monitor.watch(socket, { maxQueueBytes: 1 << 30, stallTimeoutMs: 1 << 30 }, () => exceeded++);
for (const socket of accepted) ioctlMonitor.watch(socket, { maxQueueBytes: 1 << 30, stallTimeoutMs: 1 << 30 }, () => exceeded++);

const checks = Number(values.checks);
const measure = async (what: string, once: () => Promise<unknown>, prepare = () => {}) => {
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let index = 0; index < checks; index++) {
    prepare();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = process.cpuUsage();
    const started = performance.now();
    await once();
    walls.push(performance.now() - started);
    const cpu = process.cpuUsage(before);
    cpus.push((cpu.user + cpu.system) / 1000);
  }
  const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] as number;
  console.log(`${what}: median wall ${median(walls).toFixed(1)} ms, median CPU ${median(cpus).toFixed(1)} ms per check (max wall ${Math.max(...walls).toFixed(1)} ms)`);
};

const lines = (await import('node:fs')).readFileSync('/proc/net/tcp', 'latin1').split('\n').length - 2;
console.log(`${accepted.length} watched connections; /proc/net/tcp has ${lines} lines`);
// As after a broadcast: every connection was sent something since the last check (an idle one is skipped).
const element = Buffer.alloc(100);
const broadcast = () => {
  for (const socket of accepted) socket.write(element);
};
await measure('SendProgressMonitor.check (read + parse /proc/net/tcp{,6}, counters in slices)', () => monitor.check(), broadcast);
await monitor.check();
await measure('SendProgressMonitor.check with every connection idle since the last (no snapshot)', () => monitor.check());
if (perSocket === undefined) console.log('ioctl(SIOCOUTQ): not available here (koffi not installed, or not Linux)');
else {
  await measure('SendProgressMonitor.check reading each socket with ioctl(SIOCOUTQ) (counters in slices)', () => ioctlMonitor.check(), broadcast);
  await ioctlMonitor.check();
  await measure('the same with every connection idle since the last', () => ioctlMonitor.check());
}
const queues = new ProcNetTcpSendQueues();
await measure('snapshot alone (read + parse)', () => queues.snapshot(() => undefined));
const run = promisify(execFile);
const childTicks = async () => {
  const stat = (await import('node:fs')).readFileSync('/proc/self/stat', 'latin1');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10; // cutime + cstime, in ms at 100 Hz
};
const ssBefore = await childTicks();
await measure(`ss -tnH 'sport = :${port}' (spawned per check; its own CPU below)`, () => run('ss', ['-tnH', `sport = :${port}`], { maxBuffer: 64 * 1024 * 1024 }));
console.log(`ss processes' own CPU: ${((await childTicks()) - ssBefore) / checks} ms per check`);
console.log(`(connections reported over limits: ${exceeded}; watched: ${monitor.size} and ${ioctlMonitor.size})`);
close();

// Connections whose client reads everything, idle once it has: a quiet stream between two elements.
const readers = await openConnections(port + 1, true);
const monitors = [false, true].map((writesReported) => {
  const watching = new SendProgressMonitor(1_000, new ProcNetTcpSendQueues(), manual, undefined, perSocket);
  const watches = readers.accepted.map((socket) => watching.watch(socket, { maxQueueBytes: 1 << 30, stallTimeoutMs: 1 << 30 }, () => exceeded++, { writesReported }));
  return { writesReported, watching, watches };
});
for (const socket of readers.accepted) socket.write(element);
for (const { watches } of monitors) for (const watch of watches) watch.wrote();
await new Promise((resolve) => setTimeout(resolve, 500)); // read and acknowledged
for (const { writesReported, watching } of monitors) {
  await watching.check(); // each found idle
  await measure(
    `every connection idle, its client having read all, writes ${writesReported ? 'reported (writesReported)' : 'not reported'}: ${watching.unsettled} of ${watching.size} visited`,
    () => watching.check(),
  );
}
console.log(`(connections reported over limits: ${exceeded})`);
readers.close();
