/**
 * A worker process holding part of the client fleet: the client library's transport sessions
 * (one implementation of the protocol: caching, schedule, `Last-Event-ID`, `retry:`, backoff)
 * over lean I/O — undici and node:http, no RDF decoding, the timestamp read from the payload —
 * one keep-alive connection each, spread over several source addresses, recording the latency
 * on the client of every update in an HDR histogram. Started by the benchmark with `fork`.
 */
import { type IncomingMessage, request } from 'node:http';
import { createGunzip } from 'node:zlib';
import { Pool } from 'undici';
import {
  emptyStats,
  type LatestSession,
  LongPollSession,
  measureClockOffset,
  type PollHints,
  PollSession,
  readDescriptor,
  SseSession,
  type TransportStats,
  transportDefaults,
} from '@rdf-stream/client';
import { streamResources } from '@rdf-stream/protocol';
import { sourceAddressOf } from '../scenario/source-addresses.js';
import { AnswerBurst } from './answer-burst.js';
import { GzipEventReader } from './gzip-event-reader.js';
import { GzipFragmentTexts } from './gzip-fragment-texts.js';
import { GzipStreamCheck } from './gzip-stream-check.js';
import { LeanHttpConnection } from './lean-http-connection.js';
import { plannedPortTaken, SourceEndpoint } from './source-endpoint.js';
import { isGzipVerifyClient } from './gzip-verify-sample.js';
import { answerCause, countError, countFailure, type Fleet, pollingClient, type PollingClientOptions } from './polling-client.js';
import { POLL_TRACE_ENV, PollTrace } from './poll-trace.js';
import { type FleetClient, UpdateRecorder } from './update-recorder.js';
import { websocketClient } from './websocket-client.js';
import { wsLibraryClient } from './ws-library-client.js';
import { burstsAcrossFleet, type GzipReading, type WorkerBurst, type WorkerJob, type WorkerProgress, type WorkerReady, type WorkerReport } from './worker-protocol.js';

/** What the sessions count (requests, 304s, reconnections), for all clients of this worker. */
const stats: TransportStats = emptyStats();
const fleet: Fleet = { updates: new UpdateRecorder(Number.POSITIVE_INFINITY, 0), answers: new AnswerBurst(), counters: { errors: 0, timeouts: 0, connected: 0 }, errorCauses: new Map(), stopping: false };
const { counters } = fleet;
const clients: FleetClient[] = [];
/** Every poll's timing, when the benchmark is asked to trace them (see `POLL_TRACE_ENV`). */
const traceDirectory = process.env[POLL_TRACE_ENV];
const pollTrace = traceDirectory ? new PollTrace() : undefined;
/** This process's CPU usage when the job came: the report gives what the clients used since. */
let cpuAtJob: NodeJS.CpuUsage | undefined;
/**
 * The sessions' counts when the measurement began (the end of the ramp): the report gives the
 * requests and 304s made since, over the same window as the updates they are divided by
 * (`requests per update`), not the ramp's first requests, which find no element to wait for.
 */
let statsAtMeasure: { readonly requests: number; readonly notModified: number } | undefined;

/**
 * One connection pool per publisher instance and source address; each polling client has at most
 * one request in flight. The pool binds its connections to the address when the fleet spreads
 * over several, with a port the kernel chooses: with thousands of the address's ports in
 * TIME_WAIT that search costs the worker seconds of CPU in the kernel (`SourceEndpoint`), which
 * the default lean clients avoid by naming the port the bench planned for them.
 */
const pools = new Map<string, Pool>();

function poolFor(job: WorkerJob, url: URL, source: SourceEndpoint | undefined): Pool {
  const key = `${url.origin} ${source?.address ?? ''}`;
  let pool = pools.get(key);
  if (pool === undefined) {
    const from = source === undefined ? {} : { localAddress: source.address };
    pool = new Pool(url.origin, { connections: job.clients, pipelining: 1, keepAliveTimeout: 60_000, ...from });
    pools.set(key, pool);
  }
  return pool;
}

/** What every smart poller of this worker knows of the stream: its interval and the clock offset (read once). */
let streamFacts: Promise<Pick<PollHints, 'expectedIntervalMs' | 'clockOffsetMs'>> | undefined;
function readStreamFacts(job: WorkerJob) {
  streamFacts ??= Promise.all([readDescriptor(job.streamUrls[0]!), measureClockOffset(new URL('/time', job.streamUrls[0]!).href).catch(() => undefined)]).then(
    ([descriptor, offset]) => ({ expectedIntervalMs: descriptor?.expectedIntervalMs ?? null, clockOffsetMs: offset?.offsetMs ?? 0 }),
  );
  return streamFacts;
}

/**
 * The study's client (`fixed`): a request, then a pause; a fresh cached copy answers without a
 * request. `smart`: the client library's schedule (`smartPollDelay`): one request when the next
 * element is due, a learnt margin after it, jitter; cache freshness for an irregular stream.
 */
async function pollClient(job: WorkerJob, client: FleetClient, source: SourceEndpoint | undefined, _fleetIndex: number, streamUrl: string) {
  const smart = job.pollStrategy !== 'fixed';
  // The worker has just added this client: its number in the trace.
  const clientNumber = clients.length - 1;
  const hints: PollHints = smart ? { ...(await readStreamFacts(job)) } : {};
  const { jitterMs, minPollIntervalMs, backoff } = transportDefaults;
  const session = new PollSession({
    format: 'turtle',
    strategy: smart ? 'smart' : 'fixed',
    hints,
    pollIntervalMs: job.pollIntervalMs,
    jitterMs,
    minPollIntervalMs,
    hold: job.pollStrategy === 'smart-hold',
    backoff,
    stats,
  });
  const options = latestOptions(job, streamUrl, source, session, hints);
  await pollingClient(fleet, client, pollTrace === undefined ? options : { ...options, trace: { sink: pollTrace, client: clientNumber } });
}

/** A long-poller: the client library's `LongPollSession`. */
async function longPollClient(job: WorkerJob, client: FleetClient, source: SourceEndpoint | undefined, _fleetIndex: number, streamUrl: string) {
  const session = new LongPollSession({ format: 'turtle', waitSeconds: transportDefaults.longPollWaitSeconds, backoff: transportDefaults.backoff, stats });
  await pollingClient(fleet, client, latestOptions(job, streamUrl, source, session));
}

/**
 * Where a poller or long-poller asks: `/latest` over a connection of its own
 * (`LeanHttpConnection`, the default), or over its source address's undici pool (`--http-client undici`).
 */
function latestOptions(job: WorkerJob, streamUrl: string, source: SourceEndpoint | undefined, session: LatestSession, hints?: PollHints): PollingClientOptions {
  const url = new URL(streamResources(streamUrl).latest);
  const dispatcher =
    job.httpClient === 'undici'
      ? poolFor(job, url, source)
      : new LeanHttpConnection(url, source, (socket) => stopConnections.push(() => socket.destroy()));
  return { dispatcher, path: url.pathname, requestTimeoutMs: job.requestTimeoutMs, session, hints };
}

/** Every gzip piece inflated once for all the clients of this worker. */
const gzipTexts = new GzipFragmentTexts();
/** What this worker's gzip clients did (reported as `WorkerReport.gzip`). */
const gzipReading = { verifyClients: 0, pieces: 0, compressedBytes: 0 };
const gzipChecks: GzipStreamCheck[] = [];

/**
 * A gzip event stream's body, read cheaply: events found in the compressed bytes, their text
 * from the worker's shared inflated pieces (`GzipEventReader`); a sample client also inflates
 * its whole stream as a browser would, records what the decoder gives, and checks the cheap
 * reading against it (`GzipStreamCheck`).
 */
function readGzipBody(res: IncomingMessage, session: SseSession, check: GzipStreamCheck | undefined): void {
  const reader = new GzipEventReader(gzipTexts, transportDefaults.maxEventBytes);
  res.on('data', (chunk: Buffer) => {
    gzipReading.compressedBytes += chunk.length;
    let text: string | undefined;
    try {
      text = reader.read(chunk);
    } catch {
      // Not a gzip stream, or a piece that does not inflate: the connection is broken, as a browser would find it.
      countError(fleet, 'gzip stream broken');
      res.destroy();
      return;
    }
    if (text === undefined) return;
    gzipReading.pieces++;
    if (check !== undefined) check.read(text);
    else if (!session.received(text, Date.now())) res.destroy();
  });
  if (check === undefined) return;
  const decoded = res.pipe(createGunzip());
  decoded.setEncoding('utf8');
  decoded.on('data', (text: string) => {
    check.decoded(text);
    if (!session.received(text, Date.now())) res.destroy();
  });
  decoded.on('error', () => res.destroy());
}

/**
 * An SSE subscriber: the client library's `SseSession` (parsing, `Last-Event-ID`, `retry:`,
 * `shed`, backoff, with its defaults) over node:http, whose streams cost less CPU than
 * `fetch`'s web streams. A gzip stream is read without inflating it (`readGzipBody`), but on
 * the sample clients, so that the fleet's CPU, on the publisher's cores, stays what an identity
 * fleet's is.
 */
function sseClient(job: WorkerJob, client: FleetClient, source: SourceEndpoint | undefined, fleetIndex: number, streamUrl: string): Promise<void> {
  const verify = job.sseEncoding === 'gzip' && isGzipVerifyClient(fleetIndex, job.totalClients, job.gzipVerifyClients);
  if (verify) gzipReading.verifyClients++;
  return new Promise((resolve) => {
    const { backoff, maxEventBytes } = transportDefaults;
    const session = new SseSession({ format: 'turtle', backoff, maxEventBytes, stats }, (event) => {
      if (event.type === 'element') fleet.updates.record(client, event.text, event.receivedAt);
    });
    const url = new URL(`${streamResources(streamUrl).events}?format=turtle`);
    const connect = () => {
      if (fleet.stopping) {
        resolve();
        return;
      }
      let ended = false;
      const end = (failure?: string, refused = false) => {
        if (ended) return;
        ended = true;
        if (fleet.stopping || refused) resolve();
        else setTimeout(connect, session.reconnect(failure));
      };
      const headers = session.connecting();
      if (job.sseEncoding === 'gzip') headers['accept-encoding'] = 'gzip';
      const from = source?.take();
      const req = request(url, { ...from, headers, agent: false }, (res) => {
        const answer = session.answered(res.statusCode ?? 0, res.headers['content-type'], res.headers['retry-after']);
        if (answer.kind !== 'stream') {
          countError(fleet, answerCause(res.statusCode ?? 0));
          res.resume();
          res.on('close', () => end(undefined, answer.kind === 'refused'));
          return;
        }
        counters.connected++;
        client.connectedAt ??= Date.now();
        if (res.headers['content-encoding'] === 'gzip') {
          let check: GzipStreamCheck | undefined;
          if (verify) gzipChecks.push((check = new GzipStreamCheck()));
          readGzipBody(res, session, check);
        } else {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            if (!session.received(chunk, Date.now())) res.destroy();
          });
        }
        res.on('close', () => {
          counters.connected--;
          end();
        });
      });
      req.on('error', (error) => {
        // A planned port taken since the plan: connected again from another, not an error of the publisher's.
        if (plannedPortTaken(error, from)) {
          ended = true;
          connect();
          return;
        }
        countFailure(fleet, error);
        end(error.message);
      });
      req.end();
      stopConnections.push(() => req.destroy());
    };
    connect();
  });
}

/**
 * A WebSocket subscriber (`/ws?format=turtle`): RFC 6455 over a bare socket, recording each
 * element when its frame is read, with the same recorder and clock as the SSE subscribers.
 */
function websocketFleetClient(job: WorkerJob, client: FleetClient, source: SourceEndpoint | undefined, _fleetIndex: number, streamUrl: string): Promise<void> {
  const url = new URL(`${streamResources(streamUrl).webSocket}?format=turtle`);
  if (job.websocketClient === 'ws') return wsLibraryClient(fleet, client, url, source, stats, (socket) => stopConnections.push(() => socket.terminate()));
  return websocketClient(
    fleet,
    client,
    {
      url,
      source,
      backoff: transportDefaults.backoff,
      maxMessageBytes: transportDefaults.maxEventBytes,
      stats,
    },
    (socket) => stopConnections.push(() => socket.destroy()),
  );
}

const stopConnections: Array<() => void> = [];

function gzipReport(): GzipReading | null {
  if (gzipReading.pieces === 0 && gzipReading.verifyClients === 0) return null;
  return {
    ...gzipReading,
    verified: gzipChecks.reduce((sum, check) => sum + check.verified, 0),
    mismatches: gzipChecks.reduce((sum, check) => sum + check.mismatches, 0),
    piecesInflated: gzipTexts.inflated,
  };
}

process.on('message', (message: WorkerJob | 'stop' | 'burst-go') => {
  if (message === 'burst-go') {
    fleet.answers?.fleetOver();
    return;
  }
  if (message === 'stop') {
    fleet.stopping = true;
    for (const stop of stopConnections) stop();
    for (const pool of pools.values()) void pool.destroy();
    const cpu = process.cpuUsage(cpuAtJob);
    if (pollTrace !== undefined && traceDirectory !== undefined) pollTrace.write(traceDirectory);
    const report: WorkerReport = {
      type: 'report',
      elements: fleet.updates.elements(),
      samples: fleet.updates.samples,
      clients,
      requests: stats.requests - (statsAtMeasure?.requests ?? stats.requests),
      notModified: stats.notModified - (statsAtMeasure?.notModified ?? stats.notModified),
      errors: counters.errors,
      errorCauses: Object.fromEntries(fleet.errorCauses ?? []),
      timeouts: counters.timeouts,
      reconnects: stats.reconnects,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      gzip: gzipReport(),
    };
    process.send?.(report, () => process.exit(0));
    return;
  }
  const job = message;
  cpuAtJob = process.cpuUsage();
  if (burstsAcrossFleet(job.mode) && fleet.answers !== undefined) {
    const tell = (state: WorkerBurst['state']) => process.send?.({ type: 'burst', state } satisfies WorkerBurst);
    fleet.answers.gate = { over: () => tell('over'), withdrawn: () => tell('withdrawn') };
  }
  setTimeout(() => (statsAtMeasure = { requests: stats.requests, notModified: stats.notModified }), Math.max(0, job.measureFromMs - Date.now()));
  fleet.updates = new UpdateRecorder(job.measureFromMs, job.sampleRate);
  const run = { poll: pollClient, 'long-poll': longPollClient, sse: sseClient, websocket: websocketFleetClient }[job.mode];
  for (let index = 0; index < job.clients; index++) {
    const fleetIndex = job.firstClient + index;
    const delayMs = (fleetIndex / Math.max(1, job.totalClients)) * job.rampMs;
    setTimeout(() => {
      if (fleet.stopping) return;
      const client: FleetClient = { connectedAt: undefined, seqs: [] };
      clients.push(client);
      // Client i goes to instance i mod N; the clients of an instance alternate over the source addresses.
      const instances = job.streamUrls.length;
      const source = job.localAddresses.length > 1 ? new SourceEndpoint(sourceAddressOf(fleetIndex, instances, job.localAddresses), job.sourcePorts[index] ?? 0) : undefined;
      void run(job, client, source, fleetIndex, job.streamUrls[fleetIndex % instances]!);
    }, delayMs);
  }
  setInterval(() => {
    const progress: WorkerProgress = { type: 'progress', connected: counters.connected, updates: fleet.updates.updates };
    process.send?.(progress);
  }, 1000).unref();
});

// The fleet's clock starts when every worker has loaded (under load, that can take seconds).
const ready: WorkerReady = { type: 'ready' };
process.send?.(ready);
