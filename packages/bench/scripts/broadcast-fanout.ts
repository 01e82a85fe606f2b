/**
 * What one broadcast costs the publisher, SSE and WebSocket, against the floor of Node writing
 * the same bytes to raw sockets, in the same run and to the same number of subscribers:
 *
 * - `identity`: the publisher's broadcast to N subscribers, read from its own metric
 *   (`rdf_stream_broadcast_duration_seconds`: one element written to every subscriber, batches
 *   and yields included) and its CPU time from /proc;
 * - `gzip`: the same subscribers asking for `Accept-Encoding: gzip` (each event compressed once, the same bytes for all);
 * - `raw`: `raw-fanout-server.ts`, a bare `node:net` server writing the publisher's own frame
 *   (captured from the stream, in chunked framing) with `socket.write`, in the same batches;
 * - `ws`: the data WebSocket (`/ws`), clients without permessage-deflate (each element's frame
 *   built once, written to every socket);
 * - `ws-deflate`: the same, clients offering permessage-deflate (each element deflated once).
 *
 * The SSE subscribers are node:http + eventsource-parser, the WebSocket ones `ws` clients
 * (both `subscriber-fleet.ts`), spread over `--processes` client processes (the open-file limit); they
 * report the bytes each event took on the wire.
 * Usage: pnpm exec tsx packages/bench/scripts/broadcast-fanout.ts [--subscribers 10000] [--elements 6] [--interval 2]
 *        [--phases identity,gzip,raw,ws,ws-deflate] [--cpu-prof DIR]
 */
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { defaults } from '@rdf-stream/publisher';
import { ProcessCpuClock } from '../src/collect/process-cpu-clock.js';
import { PublisherProcess } from '../src/process/publisher-process.js';
import type { SubscriberFleetMessage, SubscriberFleetReport, SubscriberTransport } from './subscriber-fleet.js';

const { values } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '10000' },
    elements: { type: 'string', default: '6' },
    interval: { type: 'string', default: '2' },
    processes: { type: 'string', default: '2' },
    port: { type: 'string', default: '18580' },
    'raw-port': { type: 'string', default: '18581' },
    phases: { type: 'string', default: 'identity,gzip,raw,ws,ws-deflate' },
    'cpu-prof': { type: 'string' },
  },
});
const subscribers = Number(values.subscribers);
const elements = Number(values.elements);
const intervalMs = Number(values.interval) * 1000;
const processes = Number(values.processes);
type Phase = 'identity' | 'gzip' | 'raw' | 'ws' | 'ws-deflate';
const phases = values.phases!.split(',') as Phase[];
const base = `http://127.0.0.1:${values.port}`;
const eventsUrl = `${base}/streams/parking/events?format=turtle`;
const webSocketUrl = `ws://127.0.0.1:${values.port}/streams/parking/ws?format=turtle`;
const batchSize = defaults.broadcastBatchSize;

interface PhaseResult {
  readonly phase: string;
  readonly broadcasts: number;
  /** Median wall time of one broadcast to every subscriber (ms). */
  readonly broadcastMs: number;
  readonly broadcastMsMin: number;
  readonly broadcastMsMax: number;
  /** The median broadcast divided by the subscribers it reached (µs). */
  readonly microsPerSubscriber: number;
  /** Median CPU time of a broadcast's batches (yields excluded) per subscriber (µs). */
  readonly cpuMicrosPerSubscriber: number;
  /**
   * The server process's CPU time (user + system, /proc) over the phase, per element (ms): for the
   * publisher, rendering, heartbeats and the reads of /metrics are in it too.
   */
  readonly cpuMsPerElement: number;
  /** Body bytes per event on the wire, as the subscribers counted them. */
  readonly bytesPerEvent: number;
  /** Subscribers whose stream was compressed (gzip, or permessage-deflate negotiated). */
  readonly subscribersCompressed: number;
  readonly clientErrors: number;
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const match = new RegExp(`^${name}\\{stream="parking"\\} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

const forkClients = (): ChildProcess[] =>
  Array.from({ length: processes }, () =>
    fork(new URL('./subscriber-fleet.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
const sseClients = forkClients();
const wsClients = phases.some((phase) => phase.startsWith('ws')) ? forkClients() : [];
/** The client processes of the phase running. */
let clients = sseClients;

async function ask<T>(client: ChildProcess, message: unknown): Promise<T> {
  const answer = once(client, 'message');
  client.send(message as never);
  return ((await answer) as [T])[0];
}

async function connect(url: string, transport: SubscriberTransport, compress: boolean): Promise<void> {
  const perProcess = Math.ceil(subscribers / processes);
  await Promise.all(
    clients.map((client, index) => {
      const message: SubscriberFleetMessage = { url, count: Math.min(perProcess, subscribers - index * perProcess), transport, compress };
      return ask(client, message);
    }),
  );
}

async function report(): Promise<SubscriberFleetReport> {
  const reports = await Promise.all(clients.map((client) => ask<SubscriberFleetReport>(client, 'report')));
  return reports.reduce((sum, next) => ({
    events: sum.events + next.events,
    errors: sum.errors + next.errors,
    closed: sum.closed + next.closed,
    bodyBytes: sum.bodyBytes + next.bodyBytes,
    encoded: sum.encoded + next.encoded,
  }));
}

const closeAll = () => Promise.all(clients.map((client) => ask(client, 'close-all')));

/** One element's SSE frame as the publisher writes it (`id:` and `data:` lines), read off its stream. */
async function captureFrame(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = request(eventsUrl, { headers: { accept: 'text/event-stream' } }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
        const block = text.split('\n\n').find((candidate, index, all) => candidate.startsWith('id: ') && index < all.length - 1);
        if (block !== undefined) {
          req.destroy();
          resolve(Buffer.from(`${block}\n\n`));
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function publisherPhase(publisher: PublisherProcess, encoding: Exclude<Phase, 'raw'>): Promise<PhaseResult> {
  const webSocket = encoding.startsWith('ws');
  clients = webSocket ? wsClients : sseClients;
  await connect(webSocket ? webSocketUrl : eventsUrl, webSocket ? 'ws' : 'sse', encoding === 'gzip' || encoding === 'ws-deflate');
  process.stdout.write(`[${encoding}] ${subscribers} subscribers connected (metric: ${await metric('rdf_stream_subscribers')})\n`);
  // Start on an element boundary: the first broadcast after the crowd is in.
  let lastCount = await metric('rdf_stream_broadcast_duration_seconds_count');
  while ((await metric('rdf_stream_broadcast_duration_seconds_count')) === lastCount) await sleep(50);
  lastCount = await metric('rdf_stream_broadcast_duration_seconds_count');
  let lastSum = await metric('rdf_stream_broadcast_duration_seconds_sum');
  const before = await report();
  const cpuClock = new ProcessCpuClock(publisher.pid);
  const cpuBefore = cpuClock.readMs();
  const durations: number[] = [];
  const cpuTimes: number[] = [];
  let lastCpuSum = await metric('rdf_stream_broadcast_cpu_seconds_sum');
  while (durations.length < elements) {
    // Not more often: each read of /metrics costs the publisher CPU that this phase counts.
    await sleep(500);
    const count = await metric('rdf_stream_broadcast_duration_seconds_count');
    if (count === lastCount) continue;
    const sum = await metric('rdf_stream_broadcast_duration_seconds_sum');
    durations.push(((sum - lastSum) / (count - lastCount)) * 1000);
    const cpuSum = await metric('rdf_stream_broadcast_cpu_seconds_sum');
    cpuTimes.push(((cpuSum - lastCpuSum) / (count - lastCount)) * 1000);
    lastCpuSum = cpuSum;
    process.stdout.write(`[${encoding}] broadcast to ${await metric('rdf_stream_broadcast_subscribers')} subscribers in ${durations.at(-1)!.toFixed(1)} ms\n`);
    lastSum = sum;
    lastCount = count;
  }
  const cpuAfter = cpuClock.readMs();
  await sleep(500); // the clients read the last element
  const after = await report();
  await closeAll();
  return summary(encoding, durations, cpuTimes, (cpuAfter - cpuBefore) / durations.length, before, after);
}

async function rawPhase(frame: Buffer): Promise<PhaseResult> {
  clients = sseClients;
  const server = fork(new URL('./raw-fanout-server.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    await ask(server, { kind: 'listen', port: Number(values['raw-port']) });
    await connect(`http://127.0.0.1:${values['raw-port']}/`, 'sse', false);
    process.stdout.write(`[raw] ${subscribers} subscribers connected\n`);
    const before = await report();
    const cpuClock = new ProcessCpuClock(server.pid!);
    const cpuBefore = cpuClock.readMs();
    const durations: number[] = [];
    const cpuTimes: number[] = [];
    for (let index = 0; index < elements; index++) {
      const result = await ask<{ durationMs: number; cpuMs: number; reached: number }>(server, { kind: 'broadcast', frameBase64: frame.toString('base64'), batchSize });
      durations.push(result.durationMs);
      cpuTimes.push(result.cpuMs);
      process.stdout.write(`[raw] broadcast to ${result.reached} subscribers in ${result.durationMs.toFixed(1)} ms\n`);
      await sleep(intervalMs);
    }
    const cpuAfter = cpuClock.readMs();
    const after = await report();
    await closeAll();
    return summary('raw', durations, cpuTimes, (cpuAfter - cpuBefore) / durations.length, before, after);
  } finally {
    server.kill();
  }
}

function summary(
  phase: string,
  durations: readonly number[],
  cpuTimes: readonly number[],
  cpuMsPerElement: number,
  before: SubscriberFleetReport,
  after: SubscriberFleetReport,
): PhaseResult {
  const events = after.events - before.events;
  return {
    phase,
    broadcasts: durations.length,
    broadcastMs: round(median(durations)),
    broadcastMsMin: round(Math.min(...durations)),
    broadcastMsMax: round(Math.max(...durations)),
    microsPerSubscriber: round((median(durations) * 1000) / subscribers, 2),
    cpuMicrosPerSubscriber: round((median(cpuTimes) * 1000) / subscribers, 2),
    cpuMsPerElement: round(cpuMsPerElement),
    bytesPerEvent: Math.round((after.bodyBytes - before.bodyBytes) / Math.max(1, events)),
    subscribersCompressed: after.encoded,
    clientErrors: after.errors,
  };
}

const publisher = await PublisherProcess.start({
  port: Number(values.port),
  flags: [
    '--interval', values.interval!, '--max-subscribers', String(subscribers + 100), '--log', 'memory',
    '--max-event-loop-delay-ms', '0', '--max-event-loop-turn-ms', '0', '--log-level', 'info',
  ],
  nodeOptions: values['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']],
});
const results: PhaseResult[] = [];
try {
  const frame = await captureFrame();
  for (const phase of phases) {
    results.push(phase === 'raw' ? await rawPhase(frame) : await publisherPhase(publisher, phase));
  }
} finally {
  [...sseClients, ...wsClients].forEach((client) => client.kill());
  await publisher.stop();
}
const raw = results.find((result) => result.phase === 'raw');
console.table(results);
console.log(
  JSON.stringify(
    {
      subscribers,
      elements,
      batchSize,
      phases: results,
      // The goal: the publisher's broadcast within 1.2× of raw socket writes of the same frame,
      // by wall time and by the CPU time of the batches (what the writes cost on a shared machine).
      // The WebSocket phases write other bytes (frames of the element's document, not its SSE
      // frame): compare them with identity and gzip too (ratioToIdentity).
      ratioToRaw:
        raw === undefined
          ? null
          : Object.fromEntries(
              results
                .filter((result) => result !== raw)
                .map((result) => [result.phase, { wall: round(result.broadcastMs / raw.broadcastMs, 2), cpu: round(result.cpuMicrosPerSubscriber / raw.cpuMicrosPerSubscriber, 2) }]),
            ),
      ratioToIdentity: (() => {
        const identity = results.find((result) => result.phase === 'identity');
        if (identity === undefined) return null;
        return Object.fromEntries(
          results
            .filter((result) => result.phase.startsWith('ws') || result.phase === 'gzip')
            .map((result) => [result.phase, { wall: round(result.broadcastMs / identity.broadcastMs, 2), cpu: round(result.cpuMicrosPerSubscriber / identity.cpuMicrosPerSubscriber, 2) }]),
        );
      })(),
    },
    null,
    2,
  ),
);
