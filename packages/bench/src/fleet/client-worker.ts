/**
 * A worker process holding part of the client fleet: lean clients on node:http (one keep-alive
 * connection each, spread over several source addresses), recording the latency on the client
 * of every update in an HDR histogram. Started by the benchmark with `fork`.
 */
import { request } from 'node:http';
import { createGunzip } from 'node:zlib';
import { Pool } from 'undici';
import { adaptMargin, LatencyRecorder, measureClockOffset, type PollHints, readDescriptor, smartPollDelay } from '@rdf-stream/client';
import { EVENT_STREAM_MEDIA_TYPE, mediaTypes, preferWait } from '@rdf-stream/protocol';
import { createParser } from 'eventsource-parser';
import { elementStamp } from './timestamp.js';
import type { WorkerJob, WorkerProgress, WorkerReady, WorkerReport } from './worker-protocol.js';

/** Per element (by sequence number): when it was generated, and its latency on every client that got it. */
const elements = new Map<number, { generatedAtMs: number; recorder: LatencyRecorder }>();
const samples: Array<[number, number]> = [];
const counters = { requests: 0, notModified: 0, errors: 0, timeouts: 0, reconnects: 0, updates: 0, connected: 0 };
/** One simulated client's record: when it was first answered, and the elements it got. */
interface FleetClient {
  connectedAt: number | undefined;
  seqs: number[];
}

const clients: FleetClient[] = [];
let stopping = false;

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
  let element = elements.get(stamp.seq);
  if (element === undefined) {
    element = { generatedAtMs: stamp.generatedAtMs, recorder: new LatencyRecorder() };
    elements.set(stamp.seq, element);
  }
  element.recorder.record(latencyMs);
  counters.updates++;
  if (Math.random() < job.sampleRate) samples.push([stamp.seq, latencyMs]);
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One connection pool per source address; each polling client has at most one request in flight. */
const pools = new Map<string, Pool>();

function poolFor(url: URL, localAddress: string, connections: number): Pool {
  let pool = pools.get(localAddress);
  if (pool === undefined) {
    pool = new Pool(url.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, connect: { localAddress } });
    pools.set(localAddress, pool);
  }
  return pool;
}

/**
 * A GET over undici (a node:http client costs ~2× the CPU per request, and the fleet shares the
 * machine's two cores with the publisher), retried once when a reused keep-alive connection
 * turns out to be closed, as browsers do.
 */
async function get(pool: Pool, url: URL, headers: Record<string, string>, timeoutMs: number): Promise<Answer> {
  for (let attempt = 0; ; attempt++) {
    counters.requests++;
    try {
      const response = await pool.request({ path: url.pathname, method: 'GET', headers, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
      return { status: response.statusCode, headers: response.headers, body: await response.body.text() };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') counters.timeouts++;
      if (attempt > 0 || (code !== 'ECONNRESET' && code !== 'UND_ERR_SOCKET' && code !== 'EPIPE')) throw error;
      counters.reconnects++;
    }
  }
}

/** Counts a /latest answer and records its element; returns the ETag to revalidate with next. */
function handleLatest(job: WorkerJob, client: FleetClient, answer: Answer, etag: string | undefined): { etag: string | undefined; failed: boolean } {
  client.connectedAt ??= Date.now();
  if (answer.status === 200) {
    record(job, client, answer.body, Date.now());
    return { etag: answer.headers.etag as string | undefined, failed: false };
  }
  if (answer.status === 304) {
    counters.notModified++;
    return { etag, failed: false };
  }
  counters.errors++;
  return { etag, failed: true };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The smart strategy's settings: the client library's defaults (`subscribe`), so that the fleet
 * measures what a user of the library gets.
 */
const SMART_POLL = { jitterMs: 250, minPollIntervalMs: 250 } as const;

/** What every smart poller of this worker knows of the stream: its interval and the clock offset (read once). */
let streamFacts: Promise<Pick<PollHints, 'expectedIntervalMs' | 'clockOffsetMs'>> | undefined;
function readStreamFacts(job: WorkerJob) {
  streamFacts ??= Promise.all([readDescriptor(job.streamUrl), measureClockOffset(new URL('/time', job.streamUrl).href).catch(() => undefined)]).then(
    ([descriptor, offset]) => ({ expectedIntervalMs: descriptor?.expectedIntervalMs ?? null, clockOffsetMs: offset?.offsetMs ?? 0 }),
  );
  return streamFacts;
}

/**
 * The study's client (`fixed`): a request, then a pause; a fresh cached copy answers without a
 * request. `smart`: the client library's schedule (`smartPollDelay`): one request when the next
 * element is due, a learnt margin after it, jitter; cache freshness for an irregular stream.
 */
async function pollClient(job: WorkerJob, client: FleetClient, localAddress: string) {
  const url = new URL(`${job.streamUrl}/latest`);
  const pool = poolFor(url, localAddress, job.clients);
  const hints: PollHints = job.pollStrategy === 'smart' ? { ...(await readStreamFacts(job)) } : {};
  let etag: string | undefined;
  let freshUntil = 0;
  let unchanged = 0;
  let marginMs = 0;
  counters.connected++;
  while (!stopping) {
    if (job.pollStrategy === 'fixed' && Date.now() < freshUntil) {
      await pause(job.pollIntervalMs);
      continue;
    }
    try {
      const headers: Record<string, string> = { accept: mediaTypes.turtle };
      if (etag !== undefined) headers['if-none-match'] = etag;
      const answer = await get(pool, url, headers, job.requestTimeoutMs);
      const maxAge = /max-age=(\d+)/.exec(String(answer.headers['cache-control'] ?? ''));
      const age = Number(answer.headers.age ?? 0);
      freshUntil = Date.now() + Math.max(0, Number(maxAge?.[1] ?? 0) - age) * 1000;
      const previous = etag;
      ({ etag } = handleLatest(job, client, answer, etag));
      if (answer.status === 200 && etag !== previous) {
        const stamp = elementStamp(answer.body);
        if (hints.generatedAtMs !== undefined) marginMs = adaptMargin(marginMs, unchanged, hints.expectedIntervalMs);
        if (stamp !== undefined) hints.generatedAtMs = stamp.generatedAtMs;
        unchanged = 0;
      } else unchanged++;
    } catch {
      counters.errors++;
    }
    await pause(
      job.pollStrategy === 'fixed'
        ? job.pollIntervalMs
        : smartPollDelay(hints, { nowMs: Date.now(), lateAttempts: unchanged, freshForMs: Math.max(0, freshUntil - Date.now()), marginMs }, SMART_POLL),
    );
  }
}

async function longPollClient(job: WorkerJob, client: FleetClient, localAddress: string) {
  const url = new URL(`${job.streamUrl}/latest`);
  const pool = poolFor(url, localAddress, job.clients);
  let etag: string | undefined;
  counters.connected++;
  while (!stopping) {
    try {
      const headers: Record<string, string> = { accept: mediaTypes.turtle };
      if (etag !== undefined) Object.assign(headers, { 'if-none-match': etag, prefer: preferWait(30) });
      const answer = await get(pool, url, headers, 35_000);
      const handled = handleLatest(job, client, answer, etag);
      etag = handled.etag;
      if (handled.failed) await pause(1000);
    } catch {
      if (!stopping) {
        counters.errors++;
        await pause(1000);
      }
    }
  }
}

function sseClient(job: WorkerJob, client: FleetClient, localAddress: string): Promise<void> {
  return new Promise((resolve) => {
    let lastEventId: string | undefined;
    const connect = () => {
      if (stopping) {
        resolve();
        return;
      }
      counters.requests++;
      const headers: Record<string, string> = { accept: EVENT_STREAM_MEDIA_TYPE };
      if (job.sseEncoding === 'gzip') headers['accept-encoding'] = 'gzip';
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
      // A source address is bound only when the fleet spreads over several: bind() with an
      // ephemeral port searches the ports already bound, which made opening thousands of
      // connections quadratic and stalled this worker for seconds during the ramp.
      const source = job.localAddresses.length > 1 ? { localAddress } : {};
      const req = request(new URL(`${job.streamUrl}/events?format=turtle`), { ...source, headers, agent: false }, (res) => {
        counters.connected++;
        client.connectedAt ??= Date.now();
        const parser = createParser({
          onEvent: (event) => {
            if (event.id !== undefined) lastEventId = event.id;
            if (event.event === undefined) record(job, client, event.data, Date.now());
          },
        });
        // A gzip stream: every event can be decoded as soon as it arrives (each ends on a sync flush).
        const body = res.headers['content-encoding'] === 'gzip' ? res.pipe(createGunzip()) : res;
        body.setEncoding('utf8');
        body.on('data', (chunk: string) => parser.feed(chunk));
        body.on('error', () => res.destroy());
        res.on('close', () => {
          counters.connected--;
          if (!stopping) {
            counters.reconnects++;
            setTimeout(connect, 1000 + Math.random() * 1000);
          } else resolve();
        });
      });
      req.on('error', () => {
        if (!stopping) {
          counters.errors++;
          setTimeout(connect, 1000 + Math.random() * 1000);
        } else resolve();
      });
      req.end();
      stopConnections.push(() => req.destroy());
    };
    connect();
  });
}

const stopConnections: Array<() => void> = [];

process.on('message', (message: WorkerJob | 'stop') => {
  if (message === 'stop') {
    stopping = true;
    for (const stop of stopConnections) stop();
    for (const pool of pools.values()) void pool.destroy();
    const report: WorkerReport = {
      type: 'report',
      elements: [...elements].map(([seq, element]) => ({ seq, generatedAtMs: element.generatedAtMs, histogram: element.recorder.encode() })),
      samples,
      clients,
      requests: counters.requests,
      notModified: counters.notModified,
      errors: counters.errors,
      timeouts: counters.timeouts,
      reconnects: counters.reconnects,
    };
    process.send?.(report, () => process.exit(0));
    return;
  }
  const job = message;
  const run = job.mode === 'poll' ? pollClient : job.mode === 'long-poll' ? longPollClient : sseClient;
  for (let index = 0; index < job.clients; index++) {
    const fleetIndex = job.firstClient + index;
    const delayMs = (fleetIndex / Math.max(1, job.totalClients)) * job.rampMs;
    setTimeout(() => {
      if (stopping) return;
      const client: FleetClient = { connectedAt: undefined, seqs: [] };
      clients.push(client);
      void run(job, client, job.localAddresses[fleetIndex % job.localAddresses.length] ?? '127.0.0.1');
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
