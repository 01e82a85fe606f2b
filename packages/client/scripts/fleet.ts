/**
 * N clients of one transport, using this library (transports, decoding, latency), against a
 * running publisher; worker processes share the clients. Prints latency on the client
 * (p50/p90/p99/max over live updates; a poller's first answer is the element current at its
 * start, not a live update, and is left out) and requests per update per client.
 * Usage: tsx scripts/fleet.ts --url http://127.0.0.1:8080/streams/parking --transport sse|websocket|poll|long-poll
 *        [--poll-strategy smart|fixed] [--clients 1000] [--duration 30] [--ramp 5] [--processes 2]
 */
import { fork } from 'node:child_process';
import { once, setMaxListeners } from 'node:events';
import { parseArgs } from 'node:util';
import { LatencyRecorder } from '../src/latency/latency-recorder.js';
import { subscribe } from '../src/subscribe.js';
import type { TransportName } from '../src/transport/transport-event.js';

interface Job {
  url: string;
  transport: TransportName;
  pollStrategy: 'smart' | 'fixed';
  clients: number;
  durationSeconds: number;
  rampSeconds: number;
}
interface Report {
  histogram: string;
  negative: number;
  requests: number;
  elements: number;
  updates: number;
  reconnects: number;
  errors: number;
  clients: number;
}

async function runClients(job: Job): Promise<Report> {
  const recorder = new LatencyRecorder();
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // every client of this process listens to the same signal
  const totals = { requests: 0, elements: 0, updates: 0, reconnects: 0, errors: 0 };
  const endAt = Date.now() + (job.rampSeconds + job.durationSeconds) * 1000;
  setTimeout(() => stop.abort(), endAt - Date.now()).unref();
  const client = async (index: number) => {
    await new Promise((resolve) => setTimeout(resolve, (index / job.clients) * job.rampSeconds * 1000));
    const subscription = subscribe(job.url, { transport: job.transport, pollStrategy: job.pollStrategy, signal: stop.signal, clockOffset: 'measure' });
    let first = true;
    try {
      for await (const event of subscription) {
        if (event.type === 'update') {
          // A poller's first answer is the element that was already there: not a delivery.
          if (!(first && job.transport !== 'sse' && job.transport !== 'websocket')) {
            recorder.record(event.latencyMs);
            totals.updates++;
          }
          first = false;
        } else if (event.type === 'error') totals.errors++;
      }
    } catch {
      totals.errors++;
    }
    totals.requests += subscription.stats.requests;
    totals.elements += subscription.stats.elements;
    totals.reconnects += subscription.stats.reconnects;
  };
  await Promise.all(Array.from({ length: job.clients }, (_, index) => client(index)));
  return { histogram: recorder.encode(), negative: recorder.negative, clients: job.clients, ...totals };
}

if (process.send !== undefined) {
  process.once('message', (job: Job) => {
    void runClients(job).then((report) => process.send?.(report));
  });
} else {
  const { values } = parseArgs({
    options: {
      url: { type: 'string', default: 'http://127.0.0.1:8080/streams/parking' },
      transport: { type: 'string', default: 'sse' },
      'poll-strategy': { type: 'string', default: 'smart' },
      clients: { type: 'string', default: '1000' },
      duration: { type: 'string', default: '30' },
      ramp: { type: 'string', default: '5' },
      processes: { type: 'string', default: '2' },
    },
  });
  const processes = Number(values.processes);
  const clients = Number(values.clients);
  const job: Omit<Job, 'clients'> = {
    url: values.url!,
    transport: values.transport as TransportName,
    pollStrategy: values['poll-strategy'] as 'smart' | 'fixed',
    durationSeconds: Number(values.duration),
    rampSeconds: Number(values.ramp),
  };
  process.stdout.write(`${clients} ${job.transport}${job.transport === 'poll' ? ` (${job.pollStrategy})` : ''} clients in ${processes} processes, ${job.rampSeconds} s ramp + ${job.durationSeconds} s …\n`);
  const workers = Array.from({ length: processes }, (_, index) => {
    const worker = fork(new URL(import.meta.url), [], { execArgv: ['--import', 'tsx'] });
    worker.send({ ...job, clients: Math.floor(clients / processes) + (index < clients % processes ? 1 : 0) });
    return worker;
  });
  const reports = await Promise.all(workers.map(async (worker) => ((await once(worker, 'message')) as [Report])[0]));
  workers.forEach((worker) => worker.kill());
  const merged = new LatencyRecorder();
  for (const report of reports) merged.merge(report.histogram);
  const sum = (key: keyof Omit<Report, 'histogram'>) => reports.reduce((total, report) => total + report[key], 0);
  const summary = merged.summary();
  console.log(
    JSON.stringify(
      {
        transport: job.transport,
        ...(job.transport === 'poll' ? { pollStrategy: job.pollStrategy } : {}),
        clients,
        durationSeconds: job.durationSeconds,
        latencyMs: { p50: summary.p50, p90: summary.p90, p99: summary.p99, max: summary.max, mean: Number(summary.mean.toFixed(1)) },
        liveUpdates: sum('updates'),
        liveUpdatesPerClient: Number((sum('updates') / clients).toFixed(2)),
        requestsPerUpdatePerClient: Number((sum('requests') / Math.max(1, sum('elements'))).toFixed(2)),
        requests: sum('requests'),
        reconnects: sum('reconnects'),
        errors: sum('errors'),
        negativeLatencies: sum('negative'),
      },
      null,
      2,
    ),
  );
}
