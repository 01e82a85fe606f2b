/**
 * A worker process of the `upstream` scenario's clients (forked with an IPC channel). Its job:
 *
 * - `poll`: each client GETs the upstream's JSON list (through the cache in front of it) every
 *   `pollIntervalMs`, on a keep-alive connection of its own, as the study's clients did; the
 *   first time it sees a list `version`, its latency is now − the list's `changedAt`;
 * - `patches`: each client holds one `/patches` event stream of the publisher (node:http +
 *   eventsource-parser, identity or gzip); for each patch, its latency is now − the newest
 *   `sosa:resultTime` the patch adds (the upstream's `changedAt`, mapped by the publisher).
 *
 * Clients start spread over `rampMs`. Only what happens from `measureFromMs` to `endMs` counts.
 * Bytes are the bytes read from each client's sockets (headers included: what the network carries
 * to the client). Sends one report and exits.
 */
import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import { createGunzip } from 'node:zlib';
import { createParser } from 'eventsource-parser';

export interface UpstreamClientJob {
  readonly mode: 'poll' | 'patches';
  readonly url: string;
  readonly clients: number;
  readonly rampMs: number;
  readonly pollIntervalMs: number;
  readonly encoding: 'identity' | 'gzip';
  readonly measureFromMs: number;
  readonly endMs: number;
}

export interface UpstreamClientReport {
  readonly type: 'report';
  /** Change-to-client latencies (ms), one per client and change seen in the measured span. */
  readonly latenciesMs: number[];
  /** Request-to-response times of polls (ms), in the measured span. */
  readonly responseMs: number[];
  /** Bytes read from the clients' sockets in the measured span. */
  readonly bytesRead: number;
  readonly requests: number;
  readonly errors: number;
  /** Errors in the measured span by code (`ECONNRESET`, `HTTP 503`…). */
  readonly errorCodes: Record<string, number>;
  /** Patches: from the element's `prov:generatedAtTime` (the publisher's poll found the change) to the client (ms). */
  readonly fanOutMs: number[];
  readonly connected: number;
}

const resultTime = /<http:\/\/www\.w3\.org\/ns\/sosa\/resultTime> "([^"]+)"/g;
const generatedAtTime = /^A <[^>]+> <http:\/\/www\.w3\.org\/ns\/prov#generatedAtTime> "([^"]+)"/m;

process.once('message', (job: UpstreamClientJob) => void run(job));
process.send?.({ type: 'ready' });

/** What this worker's clients counted, and the sockets whose bytes are read at the end. */
class Tally {
  readonly latenciesMs: number[] = [];
  readonly responseMs: number[] = [];
  readonly fanOutMs: number[] = [];
  readonly errorCodes: Record<string, number> = {};
  requests = 0;
  errors = 0;
  connected = 0;
  readonly #sockets = new Set<Socket>();
  /** Bytes each socket had read when measurement began (sockets opened later start at 0). */
  readonly #readAtStart = new Map<Socket, number>();

  constructor(readonly job: UpstreamClientJob) {
    setTimeout(() => this.#sockets.forEach((socket) => this.#readAtStart.set(socket, socket.bytesRead)), Math.max(0, job.measureFromMs - Date.now()));
  }

  measuring(): boolean {
    return Date.now() >= this.job.measureFromMs && Date.now() < this.job.endMs;
  }

  failed(error: unknown): void {
    if (!this.measuring()) return;
    this.errors++;
    const code = (error as { code?: string }).code ?? (error as Error).message;
    this.errorCodes[code] = (this.errorCodes[code] ?? 0) + 1;
  }

  track(socket: Socket): void {
    if (!this.#sockets.has(socket)) {
      this.#sockets.add(socket);
      if (Date.now() >= this.job.measureFromMs) this.#readAtStart.set(socket, 0);
    }
  }

  /** Bytes read from every socket since measurement began. */
  bytesRead(): number {
    let bytes = 0;
    for (const socket of this.#sockets) bytes += socket.bytesRead - (this.#readAtStart.get(socket) ?? socket.bytesRead);
    return bytes;
  }
}

async function run(job: UpstreamClientJob): Promise<void> {
  const tally = new Tally(job);
  const running = Array.from({ length: job.clients }, async (_, index) => {
    await sleep((job.rampMs * index) / job.clients);
    if (job.mode === 'poll') await poller(tally);
    else await subscriber(tally);
  });
  await sleep(Math.max(0, job.endMs - Date.now()));
  // Bytes up to the end of the measured span, before connections close.
  const bytesRead = tally.bytesRead();
  await Promise.race([Promise.all(running), sleep(12_000)]);
  const { latenciesMs, responseMs, fanOutMs, requests, errors, errorCodes, connected } = tally;
  const report: UpstreamClientReport = { type: 'report', latenciesMs, responseMs, fanOutMs, bytesRead, requests, errors, errorCodes, connected };
  process.send?.(report, () => process.exit(0));
}

/** One polling client: GETs the list every `pollIntervalMs` on a keep-alive connection of its own. */
async function poller(tally: Tally): Promise<void> {
  const { job } = tally;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let seen = 0;
  let counted = false;
  while (Date.now() < job.endMs) {
    const startedAt = Date.now();
    try {
      const text = await getList(tally, agent).catch((error: unknown) => {
        // A keep-alive connection the server closed as it was reused: retried at once, as
        // browsers and undici do for idempotent requests (Node's documented pattern).
        if ((error as { reused?: boolean }).reused === true) return getList(tally, agent);
        throw error;
      });
      if (!counted) {
        counted = true;
        tally.connected++;
      }
      const { version, changedAt } = JSON.parse(text) as { version: number; changedAt: number };
      if (tally.measuring()) {
        tally.responseMs.push(Date.now() - startedAt);
        // The first list a client sees is not a change it waited for.
        if (seen !== 0 && version > seen) tally.latenciesMs.push(Date.now() - changedAt);
      }
      seen = Math.max(seen, version);
    } catch (error) {
      tally.failed(error);
    }
    await sleep(Math.max(0, startedAt + job.pollIntervalMs - Date.now()));
  }
  agent.destroy();
}

/** The upstream's JSON list, decoded; rejects on a status other than 200 (`reused`: on a reused connection). */
function getList(tally: Tally, agent: Agent): Promise<string> {
  const { job } = tally;
  return new Promise((resolve, reject) => {
    const req = request(job.url, { agent, headers: { accept: 'application/json', 'accept-encoding': job.encoding } }, (response) => {
      tally.track(response.socket);
      if (tally.measuring()) tally.requests++;
      const chunks: Buffer[] = [];
      const body = response.headers['content-encoding'] === 'gzip' ? response.pipe(createGunzip()) : response;
      body.on('data', (chunk: Buffer) => chunks.push(chunk));
      body.on('end', () => (response.statusCode === 200 ? resolve(Buffer.concat(chunks).toString()) : reject(new Error(`HTTP ${response.statusCode}`))));
      body.on('error', reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.on('error', (error) => reject(Object.assign(error, { reused: req.reusedSocket })));
    req.end();
  });
}

/** One `/patches` subscriber, until the job's end: each patch's latency and fan-out time. */
function subscriber(tally: Tally): Promise<void> {
  const { job } = tally;
  return new Promise((resolve) => {
    const req = request(job.url, { headers: { accept: 'text/event-stream', 'accept-encoding': job.encoding } }, (response) => {
      tally.track(response.socket);
      tally.connected++;
      const parser = createParser({
        onEvent: (event) => {
          if (!tally.measuring() || event.event !== undefined) return;
          let newest = 0;
          for (const match of event.data.matchAll(resultTime)) newest = Math.max(newest, Date.parse(match[1]!));
          if (newest > 0) tally.latenciesMs.push(Date.now() - newest);
          const generated = generatedAtTime.exec(event.data)?.[1];
          if (generated !== undefined) tally.fanOutMs.push(Date.now() - Date.parse(generated));
        },
      });
      const body = response.headers['content-encoding'] === 'gzip' ? response.pipe(createGunzip()) : response;
      body.setEncoding('utf8');
      body.on('data', (text: string) => parser.feed(text));
      body.on('error', () => undefined);
      response.on('close', resolve);
    });
    req.on('error', (error) => {
      tally.failed(error);
      resolve();
    });
    req.end();
    setTimeout(() => req.destroy(), Math.max(0, job.endMs - Date.now())).unref();
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
