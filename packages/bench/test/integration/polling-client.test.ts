import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { emptyStats, LongPollSession, PollSession, transportDefaults } from '@rdf-stream/client';
import { type Dispatcher, Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { AnswerBurst } from '../../src/fleet/answer-burst.js';
import { type Fleet, pollingClient } from '../../src/fleet/polling-client.js';
import { type FleetClient, UpdateRecorder } from '../../src/fleet/update-recorder.js';

/** Element `seq` as /latest serves it, generated when it is served (`agoMs` earlier). */
const element = (seq: number, agoMs = 0) =>
  `@prefix prov: <http://www.w3.org/ns/prov#>.\n<http://h/streams/s/elements/ep-${seq}> prov:generatedAtTime "${new Date(Date.now() - agoMs).toISOString()}"^^xsd:dateTime.\n`;

/** A /latest on a real socket: each request is answered by the next handler given. */
async function latest(handlers: Array<(req: IncomingMessage, res: ServerResponse) => void>) {
  const seen: Array<Record<string, string | string[] | undefined>> = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    const handler = handlers.shift();
    if (handler === undefined) res.writeHead(500).end();
    else handler(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 1, pipelining: 1 });
  opened.push(async () => {
    await pool.close();
    server.close();
  });
  return { pool, seen };
}

const opened: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of opened.splice(0)) await close();
});

/** A fixed poller (the study's client) asking again 1 ms after each answer, counting into `fleet`. */
function poller() {
  const stats = emptyStats();
  const { jitterMs, minPollIntervalMs, backoff } = transportDefaults;
  const session = new PollSession({ format: 'turtle', strategy: 'fixed', pollIntervalMs: 1, jitterMs, minPollIntervalMs, backoff, stats });
  const fleet: Fleet = { updates: new UpdateRecorder(0, 0), counters: { errors: 0, timeouts: 0, connected: 0 }, stopping: false };
  const client: FleetClient = { connectedAt: undefined, seqs: [] };
  return { session, stats, fleet, client };
}

const answer =
  (status: number, headers: Record<string, string>, body: () => string = () => '') =>
  (_req: IncomingMessage, res: ServerResponse) =>
    res.writeHead(status, headers).end(body());

describe('pollingClient', () => {
  it("sends a long-poller's next request once its worker's burst of answers is over, not between two answers", async () => {
    const burst = new AnswerBurst({ maxWaitMs: 60_000 });
    // Other clients' requests in flight, one answer read at every turn of the event loop, until stopped.
    for (let other = 0; other < 1_000_000; other++) burst.sent();
    let othersAnswering = true;
    const othersAnswer = () => {
      if (!othersAnswering) return;
      burst.answered();
      setImmediate(othersAnswer);
    };
    let answeredFirst!: () => void;
    const firstAnswered = new Promise<void>((resolve) => (answeredFirst = resolve));
    let othersAnsweringWhenAsked: boolean | undefined;
    const turtle = { 'content-type': 'text/turtle', 'cache-control': 'max-age=0' };
    const { pool, seen } = await latest([
      (_req, res) => {
        othersAnswer();
        res.writeHead(200, { ...turtle, etag: '"1"' }).end(element(1), answeredFirst);
      },
      (_req, res) => {
        othersAnsweringWhenAsked = othersAnswering;
        res.writeHead(404, { 'content-type': 'application/problem+json' }).end('{"code":"stream-not-found"}');
      },
    ]);
    const stats = emptyStats();
    const session = new LongPollSession({ format: 'turtle', waitSeconds: 30, backoff: transportDefaults.backoff, stats });
    const fleet: Fleet = { updates: new UpdateRecorder(0, 0), answers: burst, counters: { errors: 0, timeouts: 0, connected: 0 }, stopping: false };
    const client: FleetClient = { connectedAt: undefined, seqs: [] };
    const polling = pollingClient(fleet, client, { dispatcher: pool, path: '/streams/s/latest', requestTimeoutMs: 5_000, session });
    await firstAnswered;
    // The client has its answer (its connection is open, its next request due at once): the others' answers go on for a while.
    for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toHaveLength(1);
    othersAnswering = false;
    await polling;
    expect(seen).toHaveLength(2);
    expect(othersAnsweringWhenAsked).toBe(false);
    expect(seen[1]?.['if-none-match']).toBe('"1"');
    expect(client.connectedAt).toBeDefined();
  });

  it('counts a request in flight until its answer, and a failed one as answered: the burst does not wait for it', async () => {
    const burst = new AnswerBurst({ maxWaitMs: 60_000 });
    let inFlightWhenServed: number | undefined;
    const { pool, seen } = await latest([
      (_req, res) => {
        inFlightWhenServed = burst.inFlight;
        // The connection dies before an answer: the request fails.
        res.socket?.destroy();
      },
      (_req, res) => res.writeHead(404, { 'content-type': 'application/problem+json' }).end('{"code":"stream-not-found"}'),
    ]);
    const stats = emptyStats();
    const session = new LongPollSession({ format: 'turtle', waitSeconds: 30, backoff: { ...transportDefaults.backoff, initialDelayMs: 1, maxDelayMs: 1 }, stats });
    const fleet: Fleet = { updates: new UpdateRecorder(0, 0), answers: burst, counters: { errors: 0, timeouts: 0, connected: 0 }, stopping: false };
    await pollingClient(fleet, { connectedAt: undefined, seqs: [] }, { dispatcher: pool, path: '/streams/s/latest', requestTimeoutMs: 5_000, session });
    expect(inFlightWhenServed).toBe(1);
    expect(seen).toHaveLength(2);
    expect(fleet.counters.errors).toBe(2);
    expect(burst.inFlight).toBe(0);
  });

  it('records each element generated after its first answer, revalidates with the ETag, and ends on a refusal', async () => {
    const turtle = { 'content-type': 'text/turtle', 'cache-control': 'max-age=0' };
    const { pool, seen } = await latest([
      // Generated a minute before the poller came.
      answer(200, { ...turtle, etag: '"1"' }, () => element(1, 60_000)),
      answer(304, { ...turtle, etag: '"1"' }),
      answer(200, { ...turtle, etag: '"2"' }, () => element(2)),
      answer(200, { ...turtle, etag: '"2"' }, () => element(2)),
      answer(404, { 'content-type': 'application/problem+json' }, () => '{"code":"stream-not-found"}'),
    ]);
    const { session, stats, fleet, client } = poller();
    await pollingClient(fleet, client, { dispatcher: pool, path: '/streams/s/latest', requestTimeoutMs: 5_000, session });
    // Element 1 is the state the poller found (not an update); element 2 is recorded once.
    expect(client.seqs).toEqual([2]);
    expect(fleet.updates.updates).toBe(1);
    expect(seen.map((headers) => headers['if-none-match'])).toEqual([undefined, '"1"', '"1"', '"2"', '"2"']);
    expect(stats).toMatchObject({ requests: 5, notModified: 1, elements: 2 });
    expect(fleet.counters).toEqual({ errors: 1, timeouts: 0, connected: 1 });
  });

  it('never measures its first answer, even one generated in the millisecond it is read, but notes it received', async () => {
    // Stamped a second ahead: as late as the moment of the first answer, or later.
    const { pool } = await latest([
      answer(200, { 'content-type': 'text/turtle', 'cache-control': 'max-age=0', etag: '"1"' }, () => element(1, -1_000)),
      answer(404, { 'content-type': 'application/problem+json' }, () => '{"code":"stream-not-found"}'),
    ]);
    const { session, fleet, client } = poller();
    await pollingClient(fleet, client, { dispatcher: pool, path: '/streams/s/latest', requestTimeoutMs: 5_000, session });
    expect(fleet.updates.updates).toBe(0);
    expect(fleet.updates.elements()).toEqual([]);
    // An element generated from the first answer on is one the client should have: it has it.
    expect(client.seqs).toEqual([1]);
  });

  it('keeps nothing of an answer while it waits: the next request is under way and the last answer can be collected', async () => {
    // A full collection on demand (as `node --expose-gc` gives it), to see what is still reachable.
    setFlagsFromString('--expose-gc');
    const collectGarbage = runInNewContext('gc') as () => void;
    let secondAsked!: () => void;
    const asked = new Promise<void>((resolve) => (secondAsked = resolve));
    let refuse!: () => void;
    const refused = new Promise<void>((resolve) => (refuse = resolve));
    const { pool } = await latest([
      answer(200, { 'content-type': 'text/turtle', 'cache-control': 'max-age=0', etag: '"1"' }, () => element(1)),
      // The second request is held until the first answer has been looked for.
      (_req, res) => {
        secondAsked();
        void refused.then(() => res.writeHead(404).end());
      },
    ]);
    const answers: Array<WeakRef<object>> = [];
    const watched: Pick<Dispatcher, 'request'> = {
      request: async (options: Dispatcher.RequestOptions) => {
        const response = await pool.request(options);
        answers.push(new WeakRef(response), new WeakRef(response.body), new WeakRef(response.headers));
        return response;
      },
    } as Pick<Dispatcher, 'request'>;
    const { session, stats, fleet, client } = poller();
    const polling = pollingClient(fleet, client, { dispatcher: watched, path: '/streams/s/latest', requestTimeoutMs: 5_000, session });
    let kept: unknown[];
    try {
      await asked;
      // A WeakRef's target stays alive until the job that made it ends: collect in a later one.
      await new Promise((resolve) => setImmediate(resolve));
      collectGarbage();
      kept = answers.map((ref) => ref.deref());
    } finally {
      refuse();
      await polling;
    }
    expect(client.connectedAt).toBeDefined();
    expect(stats.requests).toBe(2);
    expect(kept).toEqual([undefined, undefined, undefined]);
    expect(fleet.counters.errors).toBe(1);
  });
});
