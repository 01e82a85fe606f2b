/**
 * Broadcast duration of one element to N SSE subscribers, read from the publisher's own metric
 * (rdf_stream_broadcast_duration_seconds). The publisher and the subscribers run in separate
 * processes; subscribers are spread over several client processes (open-file limit) and read
 * with node:http + eventsource-parser.
 * Usage: tsx scripts/broadcast-fanout.ts [--subscribers 10000] [--elements 6] [--interval 2]
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { spawnPublisher, stopProcess } from './spawn-publisher.js';

const { values } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '10000' },
    elements: { type: 'string', default: '6' },
    interval: { type: 'string', default: '2' },
    processes: { type: 'string', default: '2' },
    port: { type: 'string', default: '18580' },
  },
});
const subscribers = Number(values.subscribers);
const elements = Number(values.elements);
const processes = Number(values.processes);
const port = Number(values.port);
const base = `http://127.0.0.1:${port}`;

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const match = new RegExp(`^${name}\\{stream="parking"\\} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

const publisher = await spawnPublisher([
  '--port', String(port), '--interval', values.interval!, '--max-subscribers', String(subscribers + 100),
  '--max-event-loop-delay-ms', '0', '--log-level', 'info',
]);
const clients = Array.from({ length: processes }, () =>
  fork(new URL('./sse-subscribers.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
);
try {
  const perProcess = Math.ceil(subscribers / processes);
  clients.forEach((client, index) =>
    client.send({ url: `${base}/streams/parking/events?format=turtle`, count: Math.min(perProcess, subscribers - index * perProcess) }),
  );
  await Promise.all(clients.map((client) => once(client, 'message')));
  process.stdout.write(`${subscribers} subscribers connected (metric: ${await metric('rdf_stream_subscribers')})\n`);
  const startCount = await metric('rdf_stream_broadcast_duration_seconds_count');
  const startSum = await metric('rdf_stream_broadcast_duration_seconds_sum');
  const durations: number[] = [];
  let lastSum = startSum;
  let lastCount = startCount;
  while (durations.length < elements) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const count = await metric('rdf_stream_broadcast_duration_seconds_count');
    if (count > lastCount) {
      const sum = await metric('rdf_stream_broadcast_duration_seconds_sum');
      const reached = await metric('rdf_stream_broadcast_subscribers');
      durations.push(((sum - lastSum) / (count - lastCount)) * 1000);
      process.stdout.write(`element broadcast to ${reached} subscribers in ${durations.at(-1)!.toFixed(1)} ms\n`);
      lastSum = sum;
      lastCount = count;
    }
  }
  const received = await Promise.all(
    clients.map(async (client) => {
      client.send('report');
      const [report] = (await once(client, 'message')) as [{ events: number; errors: number; closed: number }];
      return report;
    }),
  );
  const sorted = [...durations].sort((a, b) => a - b);
  console.log(
    JSON.stringify(
      {
        subscribers,
        elements: durations.length,
        broadcastMs: { min: sorted[0], median: sorted[Math.floor(sorted.length / 2)], max: sorted.at(-1) },
        evicted: await metric('rdf_stream_subscribers_evicted_total'),
        clients: received,
      },
      null,
      2,
    ),
  );
} finally {
  clients.forEach((client) => client.kill());
  await stopProcess(publisher);
}
