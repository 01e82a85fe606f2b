/**
 * A worker process holding part of the client fleet: each client runs the client library's own
 * transport (`streamEvents`: its polling schedule, HTTP cache, long-poll, SSE reconnection,
 * `Last-Event-ID`, `retry:` and backoff — what users get) in lean mode, reading only each
 * element's timestamp and number from the payload, and records the latency on the client of
 * every update in an HDR histogram. Started by the benchmark with `fork`.
 */
import { Client } from 'undici';
import { LatencyRecorder, streamEvents, type TransportName, type TransportStats } from '@rdf-stream/client';
import { leanFetch } from './lean-fetch.js';
import { elementStamp } from './timestamp.js';
import type { BenchMode, WorkerJob, WorkerProgress, WorkerReady, WorkerReport } from './worker-protocol.js';

const recorder = new LatencyRecorder();
const samples: Array<[number, number]> = [];
const counters = { errors: 0, timeouts: 0, updates: 0, connected: 0 };
/** One simulated client's record: when it was first answered, and the elements it got. */
interface FleetClient {
  connectedAt: number | undefined;
  seqs: number[];
  readonly stats: TransportStats;
}

const clients: FleetClient[] = [];
let stopped = false;
/**
 * One controller per client, not one for the fleet: every wait of a transport adds and removes a
 * listener on its signal, and an AbortSignal's listeners are a list searched on each add and
 * remove — thousands of clients on one signal make the fleet quadratic in CPU.
 */
const controllers: AbortController[] = [];

/**
 * Records an element the first time a client gets it. Elements generated before the client was
 * first answered (a poller's first answer is the state it found) or during the ramp are not
 * measured updates.
 */
function record(job: WorkerJob, client: FleetClient, body: string, receivedAt: number): void {
  const stamp = elementStamp(body);
  const from = Math.max(job.measureFromMs, client.connectedAt ?? Number.POSITIVE_INFINITY);
  if (stamp === undefined || stamp.generatedAtMs < from || client.seqs.includes(stamp.seq)) return;
  client.seqs.push(stamp.seq);
  const latencyMs = receivedAt - stamp.generatedAtMs;
  recorder.record(latencyMs);
  counters.updates++;
  if (Math.random() < job.sampleRate) samples.push([stamp.seq, latencyMs]);
}

/** Every client's own keep-alive connection (as a browser tab holds one), closed at the end. */
const connections: Client[] = [];

const transports: Record<BenchMode, TransportName> = { poll: 'poll', 'long-poll': 'long-poll', sse: 'sse' };
/** Longest wait for a long-poll's answer: the server holds it up to `Prefer: wait=30`. */
const LONG_POLL_TIMEOUT_MS = 35_000;

async function runClient(job: WorkerJob, client: FleetClient, localAddress: string): Promise<void> {
  // A client of its own, not a pool shared by thousands: a pool looks for a free connection
  // among all of its own on every request.
  // Bound to a source address only when the fleet needs several: bind() with an ephemeral port
  // searches the ports in use, which made connecting thousands of clients quadratic.
  const connection = new Client(new URL(job.streamUrl).origin, {
    pipelining: 1,
    keepAliveTimeout: 60_000,
    ...(job.localAddresses.length > 1 ? { localAddress } : {}),
  });
  connections.push(connection);
  const fetchOverConnection = leanFetch(connection, {
    timeoutMs: job.mode === 'long-poll' ? LONG_POLL_TIMEOUT_MS : job.requestTimeoutMs,
    onTimeout: () => counters.timeouts++,
  });
  // A client is connected from its first answer on (an SSE stream: its headers).
  let streaming = false;
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetchOverConnection(input, init);
    client.connectedAt ??= Date.now();
    if (job.mode === 'sse' && response.ok && !streaming) {
      streaming = true;
      counters.connected++;
    }
    return response;
  }) as typeof fetch;
  if (job.mode !== 'sse') counters.connected++;
  const controller = new AbortController();
  controllers.push(controller);
  const events = streamEvents(job.streamUrl, transports[job.mode], {
    format: 'turtle',
    pollStrategy: job.pollStrategy,
    pollIntervalMs: job.pollIntervalMs,
    signal: controller.signal,
    fetch: fetchImpl,
  }, client.stats);
  try {
    for await (const event of events) {
      if (event.type === 'element') record(job, client, event.text, event.receivedAt);
      else if (event.type === 'reconnect') {
        if (streaming) {
          streaming = false;
          counters.connected--;
        }
        // An SSE stream that ended is a reconnection; anything else is a failed request.
        if (event.reason !== 'stream ended') counters.errors++;
      }
    }
  } catch {
    // A refusal for good (4xx): the client gives up, as the library's users' would.
    counters.errors++;
  }
}

process.on('message', (message: WorkerJob | 'stop') => {
  if (message === 'stop') {
    stopped = true;
    for (const controller of controllers) controller.abort();
    for (const connection of connections) void connection.destroy();
    const sum = (key: keyof TransportStats) => clients.reduce((total, client) => total + client.stats[key], 0);
    const report: WorkerReport = {
      type: 'report',
      histogram: recorder.encode(),
      samples,
      clients: clients.map(({ connectedAt, seqs }) => ({ connectedAt, seqs })),
      requests: sum('requests'),
      notModified: sum('notModified'),
      errors: counters.errors,
      timeouts: counters.timeouts,
      reconnects: sum('reconnects'),
    };
    process.send?.(report, () => process.exit(0));
    return;
  }
  const job = message;
  for (let index = 0; index < job.clients; index++) {
    const fleetIndex = job.firstClient + index;
    const delayMs = (fleetIndex / Math.max(1, job.totalClients)) * job.rampMs;
    setTimeout(() => {
      if (stopped) return;
      const client: FleetClient = { connectedAt: undefined, seqs: [], stats: { requests: 0, notModified: 0, elements: 0, reconnects: 0 } };
      clients.push(client);
      void runClient(job, client, job.localAddresses[fleetIndex % job.localAddresses.length] ?? '127.0.0.1');
    }, delayMs);
  }
  setInterval(() => {
    const progress: WorkerProgress = { type: 'progress', connected: counters.connected, updates: counters.updates };
    process.send?.(progress);
  }, 1000).unref();
});

// The fleet's clock starts when every worker has loaded (under load, that can take seconds).
const ready: WorkerReady = { type: 'ready' };
process.send?.(ready);
