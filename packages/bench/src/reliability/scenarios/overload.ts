import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { streamIri, streamResources } from '@rdf-stream/protocol';
import { freePort } from '../free-port.js';
import { percentile } from '../process-probe.js';
import { probe, probeEvery, type ProbeResult } from '../probe.js';
import { RestartablePublisher } from '../restartable-publisher.js';
import { check, timedCheck, progress, type ScenarioResult, sleep } from '../scenario-result.js';
import { SseFleet } from '../sse-fleet.js';

export interface OverloadOptions {
  /** Connections of the flood on /latest and on /health (two load processes, as a crowd or an attack would). */
  readonly latestConnections: number;
  readonly healthConnections: number;
  readonly burstSeconds: number;
  readonly subscribers: number;
}

export const overloadDefaults: OverloadOptions = { latestConnections: 1_500, healthConnections: 500, burstSeconds: 30, subscribers: 50 };
export const overloadShort: OverloadOptions = { latestConnections: 600, healthConnections: 200, burstSeconds: 8, subscribers: 20 };

/** A new request must be answered (served or shed) within this long (ms). */
const ANSWER_WITHIN_MS = 1_000;
const INTERVAL_SECONDS = 0.5;
const autocannon = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

function listenOverflows(): number {
  const [names, values] = readFileSync('/proc/net/netstat', 'utf8').split('\n');
  const index = names!.split(' ').indexOf('ListenOverflows');
  return Number(values!.split(' ')[index]);
}

function flood(url: string, connections: number, seconds: number): ChildProcess {
  return spawn(process.execPath, [autocannon, '-c', String(connections), '-d', String(seconds), '--json', url], { stdio: ['ignore', 'ignore', 'ignore'] });
}

const summarise = (results: ProbeResult[]) => {
  const answered = results.filter((result) => typeof result.status === 'number');
  const ms = answered.map((result) => result.ms);
  return {
    probes: results.length,
    unanswered: results.length - answered.length,
    p50: Math.round(percentile([...ms], 50)),
    p99: Math.round(percentile([...ms], 99)),
    max: Math.max(0, ...ms),
    shed: answered.filter((result) => result.status === 503).length,
    shedWithoutRetryAfter: answered.filter((result) => result.status === 503 && result.retryAfter === undefined).length,
    ok: answered.filter((result) => result.status === 200).length,
  };
};

/**
 * Overload: a flood of keep-alive connections that ignore `Retry-After` (autocannon) on the
 * cached document and on /health, while fresh connections probe the publisher. Guards against
 * a publisher that stops accepting connections under a crowd (new clients and operators wait
 * for seconds, or for ever) and against shedding that cuts established streams.
 */
export async function overloadScenario(options: OverloadOptions = overloadDefaults): Promise<ScenarioResult> {
  const started = performance.now();
  const publisher = new RestartablePublisher({ port: await freePort(), flags: ['--interval', String(INTERVAL_SECONDS), '--max-subscribers', '5000'] });
  await publisher.start();
  const fleet = new SseFleet({ eventsUrl: streamResources(streamIri(publisher.url, 'parking')).events, subscribers: options.subscribers });
  let largestGapMs = 0;
  const lastArrival = new Map<number, number>();
  const watch = new SseFleet({
    eventsUrl: streamResources(streamIri(publisher.url, 'parking')).events,
    subscribers: 1,
    onElement: (subscriber, _seq, _text, receivedAt) => {
      const previous = lastArrival.get(subscriber.index);
      if (previous !== undefined) largestGapMs = Math.max(largestGapMs, receivedAt - previous);
      lastArrival.set(subscriber.index, receivedAt);
    },
  });
  const floods: ChildProcess[] = [];
  try {
    await fleet.start();
    await watch.start();
    await sleep(2_000);
    const overflowsBefore = listenOverflows();
    progress('overload', `flood: ${options.latestConnections} connections on /latest, ${options.healthConnections} on /health, for ${options.burstSeconds} s`);
    floods.push(flood(streamResources(streamIri(publisher.url, 'parking')).latest, options.latestConnections, options.burstSeconds));
    floods.push(flood(`${publisher.url}/health`, options.healthConnections, options.burstSeconds));
    await sleep(2_000);
    const probing = probeEvery([streamResources(streamIri(publisher.url, 'parking')).latest, `${publisher.url}/health`, `${publisher.url}/metrics`], 300);
    await Promise.all(floods.map((child) => once(child, 'exit')));
    const during = await probing.stop();
    const overflows = listenOverflows() - overflowsBefore;
    const recoveryMs = await recovery(streamResources(streamIri(publisher.url, 'parking')).latest);
    const lastSeq = Math.max(...fleet.subscribers.map((subscriber) => subscriber.lastSeq));
    await fleet.reached(lastSeq, 30_000).catch((error: Error) => progress('overload', error.message));
    const losses = fleet.losses(lastSeq);
    const requests = summarise(during.filter((result) => result.path.endsWith('/latest')));
    const operators = summarise(during.filter((result) => !result.path.endsWith('/latest')));
    return {
      name: 'overload',
      weakness: 'a crowd of busy connections starves new ones (accept queue) while the event-loop delay looks harmless',
      seconds: Math.round((performance.now() - started) / 1000),
      figures: {
        floodConnections: options.latestConnections + options.healthConnections,
        probes: requests.probes,
        probeP50Ms: requests.p50,
        probeP99Ms: requests.p99,
        probeMaxMs: requests.max,
        shed: requests.shed,
        served: requests.ok,
        operatorP99Ms: operators.p99,
        listenOverflows: overflows,
        largestSseGapMs: Math.round(largestGapMs),
        recoveryMs,
      },
      checks: [
        timedCheck(
          `new requests answered (served, or 503 with Retry-After) within ${ANSWER_WITHIN_MS / 1000} s`,
          requests.unanswered === 0 && requests.p99 <= ANSWER_WITHIN_MS && requests.shedWithoutRetryAfter === 0,
          `p50 ${requests.p50} ms, p99 ${requests.p99} ms, max ${requests.max} ms; ${requests.unanswered} unanswered; ${requests.shed} shed, ${requests.ok} served`,
        ),
        timedCheck(
          '/health and /metrics answered 200 within 1 s',
          operators.unanswered === 0 && operators.ok === operators.probes && operators.p99 <= ANSWER_WITHIN_MS,
          `p99 ${operators.p99} ms; ${operators.ok} of ${operators.probes} answered 200`,
        ),
        check('established SSE streams kept flowing (0 missing)', losses.missing === 0 && losses.neverReceived === 0, `${losses.missing} missing; largest gap between two elements ${Math.round(largestGapMs)} ms (interval ${INTERVAL_SECONDS * 1000} ms)`),
        check('served again after the burst', Number.isFinite(recoveryMs), `${recoveryMs} ms after it ended`),
      ],
    };
  } finally {
    for (const child of floods) child.kill('SIGKILL');
    await fleet.stop();
    await watch.stop();
    await publisher.dispose();
  }
}

/** How long from now until `url` is served (200) again on a new request (ms); NaN if not within a minute or so. */
async function recovery(url: string): Promise<number> {
  const endedAt = performance.now();
  for (let attempt = 0; attempt < 600; attempt++) {
    if ((await probe(url, 5_000)).status === 200) return Math.round(performance.now() - endedAt);
    await sleep(100);
  }
  return Number.NaN;
}
