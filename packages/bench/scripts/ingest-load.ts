/**
 * Ingest throughput and latency: posts Turtle elements of `--observations` SOSA observations to
 * an ingest stream over keep-alive connections for `--duration` seconds, while one SSE
 * subscriber receives them. Reports elements/s and, per element, the time from the publisher
 * accepting the POST (the element's generatedAt, stamped once every check has passed) to its
 * arrival at the subscriber, and from sending the POST to that arrival.
 *
 *   pnpm exec tsx packages/bench/scripts/ingest-load.ts --connections 8 --duration 30
 *
 * `--log file` (default: the durable log, in a scratch data directory), `--log memory`, or
 * `--log redis` (the shared log: a private Valkey is started, append-only file on, fsync
 * `--appendfsync always|everysec`, and its CPU per element reported; `--instances 2` starts two
 * publishers on it and spreads the connections over both, which then race for numbers);
 * `--log-sync-interval-ms N` spaces the file log's syncs (group commit).
 *
 * The publisher runs as its own process (same machine, same clock: no offset to correct).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createParser } from 'eventsource-parser';
import { Pool } from 'undici';
import { ProcessCpuClock } from '../src/collect/process-cpu-clock.js';
import { type Appendfsync, appendfsyncPolicies, PrivateValkey } from '../src/process/private-valkey.js';
import { PublisherProcess } from '../src/process/publisher-process.js';
import { freePort } from '../src/reliability/free-port.js';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '8' },
    duration: { type: 'string', default: '30' },
    observations: { type: 'string', default: '100' },
    port: { type: 'string', default: '18950' },
    /** `none` measures without SHACL validation. */
    shape: { type: 'string', default: 'bundled' },
    log: { type: 'string', default: 'file' },
    appendfsync: { type: 'string', default: 'always' },
    instances: { type: 'string', default: '1' },
    'log-sync-interval-ms': { type: 'string', default: '0' },
  },
});
const connections = Number(values.connections);
const durationMs = Number(values.duration) * 1000;
const observationCount = Number(values.observations);
const port = Number(values.port);
const base = `http://127.0.0.1:${port}`;
const stream = `${base}/streams/sensors`;
const token = randomBytes(24).toString('hex');

/** A realistic element: `count` temperature observations of one building, values varying by `variant`. */
function body(count: number, variant: number): string {
  const lines = ['@prefix sosa: <http://www.w3.org/ns/sosa/>.', '@prefix xsd: <http://www.w3.org/2001/XMLSchema#>.'];
  const at = new Date(Date.UTC(2026, 10, 22, 10, 0, variant)).toISOString();
  for (let i = 0; i < count; i++) {
    lines.push(
      `<obs/${variant}-${i}> a sosa:Observation; sosa:madeBySensor <https://data.example.org/sensors/t${i}>;`,
      `  sosa:observedProperty <https://data.example.org/properties/air-temperature>;`,
      `  sosa:hasFeatureOfInterest <https://data.example.org/rooms/r${i}>;`,
      `  sosa:hasSimpleResult ${(20 + ((i * 7 + variant) % 50) / 10).toFixed(1)}; sosa:resultTime "${at}"^^xsd:dateTime.`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Each process's CPU clock, by pid: kept between readings, which it counts from its first. */
const clocks = new Map<number, ProcessCpuClock>();

/**
 * The publisher's CPU time so far (ms): its cost per element, which elements per second hide when
 * the machine is the bottleneck. Null where /proc cannot be read (off Linux).
 */
function publisherCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const clock = clocks.get(pid) ?? new ProcessCpuClock(pid);
    clocks.set(pid, clock);
    return clock.readMs();
  } catch {
    return null;
  }
}

const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  return { count: sorted.length, p50: round(percentile(sorted, 50)), p90: round(percentile(sorted, 90)), p99: round(percentile(sorted, 99)), max: round(sorted.at(-1) ?? NaN) };
};

const dir = mkdtempSync(join(tmpdir(), 'ingest-load-'));
const configFile = join(dir, 'ingest.yaml');
writeFileSync(
  configFile,
  `streams:\n  - id: sensors\n    title: Load test\n    retainedElements: 100\n${values.shape === 'none' ? '    shape: none\n' : ''}    source: { kind: ingest, tokenEnv: INGEST_LOAD_TOKEN }\n`,
);
process.env.INGEST_LOAD_TOKEN = token;
// The subscriber shares this process with the posting loops: a deep queue keeps it from being
// evicted when this process falls behind reading (the limit is the publisher's to enforce, not
// what is measured here).
const appendfsync = String(values.appendfsync) as Appendfsync;
if (!appendfsyncPolicies.includes(appendfsync)) throw new Error(`--appendfsync must be one of ${appendfsyncPolicies.join(', ')}`);
/** The shared log's server: the bench's own Valkey (scripts/valkey.sh), on a free port. */
const valkey = values.log === 'redis' ? await PrivateValkey.start(await freePort(), appendfsync) : undefined;
const instanceCount = values.log === 'redis' ? Number(values.instances) : 1;
const publishers = await Promise.all(
  Array.from({ length: instanceCount }, (_, index) =>
    PublisherProcess.start({
      port: port + index,
      flags: [
        '--config', configFile, '--log-level', 'info', '--max-subscriber-queue-bytes', String(256 * 1024 * 1024),
        '--log', String(values.log), '--data-dir', join(dir, 'data'), '--log-sync-interval-ms', String(values['log-sync-interval-ms']),
        ...(valkey === undefined ? [] : ['--redis-url', valkey.url, '--base-url', base]),
      ],
    }),
  ),
);
const bodies = Array.from({ length: 64 }, (_, variant) => body(observationCount, variant));
console.log(
  `body: ${observationCount} observations, ${Buffer.byteLength(bodies[0]!)} bytes of Turtle; ${connections} keep-alive connections; ${durationMs / 1000} s; log ${values.log}, sync interval ${values['log-sync-interval-ms']} ms`,
);

// The subscriber: arrival time of every element, by sequence number.
const arrivals = new Map<number, number>();
let wake: (() => void) | undefined;
const subscriber = httpRequest(`${stream}/events?format=turtle`, { headers: { accept: 'text/event-stream' } });
await new Promise<void>((resolve, reject) => {
  subscriber.on('error', reject);
  subscriber.on('response', (response) => {
    const parser = createParser({
      onEvent: (event) => {
        if (event.event !== undefined || event.id === undefined) return;
        // Element ids are `{epoch}-{seq}`.
        arrivals.set(Number(event.id.slice(event.id.lastIndexOf('-') + 1)), performance.timeOrigin + performance.now());
        wake?.();
      },
    });
    response.setEncoding('utf8').on('data', (chunk: string) => parser.feed(chunk));
    resolve();
  });
  subscriber.end();
});

const pools = publishers.map((_, index) => new Pool(`http://127.0.0.1:${port + index}`, { connections: Math.ceil(connections / instanceCount), pipelining: 1 }));
const accepted: Array<{ seq: number; generatedAt: number; sentAt: number; answeredAt: number }> = [];
let refused = 0;
const startedAt = Date.now();
const cpuAtStart = publishers.map((running) => publisherCpuMs(running.pid));
const valkeyCpuAtStart = valkey === undefined ? null : publisherCpuMs(valkey.pid);
let sent = 0;
const progress = setInterval(() => process.stderr.write(`\r${((Date.now() - startedAt) / 1000).toFixed(0)} s: ${accepted.length} elements accepted`), 1_000);

await Promise.all(
  Array.from({ length: connections }, async (_, connection) => {
    const pool = pools[connection % pools.length]!;
    while (Date.now() - startedAt < durationMs) {
      const payload = bodies[sent++ % bodies.length]!;
      const sentAt = performance.timeOrigin + performance.now();
      const response = await pool.request({
        path: '/streams/sensors',
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/turtle' },
        body: payload,
      });
      const text = await response.body.text();
      const answeredAt = performance.timeOrigin + performance.now();
      if (response.statusCode !== 201) {
        refused++;
        if (refused <= 3) console.error(`\n${response.statusCode}: ${text}`);
        continue;
      }
      const answer = JSON.parse(text) as { seq: number; generatedAt: string };
      accepted.push({ seq: answer.seq, generatedAt: Date.parse(answer.generatedAt), sentAt, answeredAt });
    }
  }),
);
const elapsedMs = Date.now() - startedAt;
const cpuAtEnd = publishers.map((running) => publisherCpuMs(running.pid));
const valkeyCpuAtEnd = valkey === undefined ? null : publisherCpuMs(valkey.pid);
const cpuMs = cpuAtStart.every((ms) => ms !== null) && cpuAtEnd.every((ms) => ms !== null)
  ? cpuAtEnd.reduce((sum: number, ms, index) => sum + ms! - cpuAtStart[index]!, 0)
  : null;
clearInterval(progress);
process.stderr.write('\n');

// Every accepted element must reach the subscriber.
const deadline = Date.now() + 10_000;
while (accepted.some((a) => !arrivals.has(a.seq)) && Date.now() < deadline) {
  await new Promise<void>((resolve) => {
    wake = resolve;
    setTimeout(resolve, 100).unref();
  });
}
const missing = accepted.filter((a) => !arrivals.has(a.seq)).length;

const acceptToSse = accepted.filter((a) => arrivals.has(a.seq)).map((a) => arrivals.get(a.seq)! - a.generatedAt);
const postToSse = accepted.filter((a) => arrivals.has(a.seq)).map((a) => arrivals.get(a.seq)! - a.sentAt);
const roundTrip = accepted.map((a) => a.answeredAt - a.sentAt);
console.log(
  JSON.stringify(
    {
      elementsAccepted: accepted.length,
      refused,
      missingAtSubscriber: missing,
      elementsPerSecond: Math.round((accepted.length / elapsedMs) * 1000 * 10) / 10,
      observationsPerSecond: Math.round((accepted.length * observationCount * 1000) / elapsedMs),
      log: values.log === 'redis' ? `redis (Valkey, appendfsync ${values.appendfsync}, ${instanceCount} instance${instanceCount > 1 ? 's' : ''})` : values.log,
      publisherCpuMsPerElement: cpuMs === null || accepted.length === 0 ? null : Math.round((cpuMs / accepted.length) * 100) / 100,
      valkeyCpuMsPerElement:
        valkeyCpuAtStart === null || valkeyCpuAtEnd === null || accepted.length === 0 ? null : Math.round(((valkeyCpuAtEnd - valkeyCpuAtStart) / accepted.length) * 100) / 100,
      acceptedToSseMs: summary(acceptToSse),
      postSentToSseMs: summary(postToSse),
      postRoundTripMs: summary(roundTrip),
    },
    null,
    2,
  ),
);

subscriber.destroy();
await Promise.all(pools.map((pool) => pool.close()));
await Promise.all(publishers.map((running) => running.stop()));
await valkey?.stop();
rmSync(dir, { recursive: true, force: true });
