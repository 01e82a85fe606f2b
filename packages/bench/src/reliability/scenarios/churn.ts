import { streamIri, streamResources } from '@rdf-stream/protocol';
import { freePort } from '../free-port.js';
import { RestartablePublisher } from '../restartable-publisher.js';
import { between, check, progress, type ScenarioResult, sleep } from '../scenario-result.js';
import { SseFleet } from '../sse-fleet.js';
import { type CutKind, TcpRelay } from '../tcp-relay.js';

export interface ChurnOptions {
  readonly subscribers: number;
  readonly durationSeconds: number;
  /** Each subscriber is cut once in every interval drawn uniformly from this range (seconds). */
  readonly cutEverySeconds: readonly [number, number];
  /** Seconds between two elements of the stream. */
  readonly intervalSeconds: number;
}

export const churnDefaults: ChurnOptions = { subscribers: 1_000, durationSeconds: 600, cutEverySeconds: [5, 30], intervalSeconds: 0.5 };
export const churnShort: ChurnOptions = { subscribers: 100, durationSeconds: 30, cutEverySeconds: [2, 8], intervalSeconds: 0.25 };

const cutKinds = ['server-close', 'client-abort', 'tcp-reset'] as const;

/**
 * Churn: every subscriber is cut again and again, at random moments, in the three ways
 * connections die (the server or a proxy closing the stream, the client giving up and
 * subscribing again from its last id, a TCP reset), each through its own TCP relay, while the
 * stream publishes. Guards against elements lost or repeated at the seam between a resumed
 * connection's replay and the live broadcast.
 */
export async function churnScenario(options: ChurnOptions = churnDefaults): Promise<ScenarioResult> {
  const started = performance.now();
  const publisher = new RestartablePublisher({
    port: await freePort(),
    flags: ['--log', 'file', '--interval', String(options.intervalSeconds), '--facilities', '2', '--max-subscribers', String(options.subscribers * 2 + 100)],
  });
  await publisher.start();
  const relays: TcpRelay[] = [];
  const relayPorts: number[] = [];
  for (let index = 0; index < options.subscribers; index++) {
    const relay = new TcpRelay({ host: '127.0.0.1', port: Number(new URL(publisher.url).port) });
    relays.push(relay);
    relayPorts.push(await relay.listen());
  }
  const fleet = new SseFleet({
    eventsUrl: (index) => streamResources(streamIri(`http://127.0.0.1:${relayPorts[index]}`, 'parking')).events,
    subscribers: options.subscribers,
    backoff: { initialDelayMs: 500, maxDelayMs: 5_000 },
  });
  const cuts: Record<(typeof cutKinds)[number], number> = { 'server-close': 0, 'client-abort': 0, 'tcp-reset': 0 };
  let cutting = true;
  const cutter = async (index: number) => {
    const [min, max] = options.cutEverySeconds;
    while (cutting) {
      await sleep(between(min, max) * 1_000);
      if (!cutting) return;
      const kind = cutKinds[Math.floor(Math.random() * cutKinds.length)]!;
      cuts[kind]++;
      if (kind === 'client-abort') fleet.restart(fleet.subscribers[index]!);
      else relays[index]!.cutAll(kind as CutKind);
    }
  };
  try {
    await fleet.start();
    progress('churn', `${options.subscribers} subscribers through their own relays; cutting each every ${options.cutEverySeconds.join('–')} s for ${options.durationSeconds} s`);
    const cutters = fleet.subscribers.map((subscriber) => cutter(subscriber.index));
    const deadline = Date.now() + options.durationSeconds * 1_000;
    while (Date.now() < deadline) {
      await sleep(Math.min(10_000, deadline - Date.now()));
      const total = cuts['server-close'] + cuts['client-abort'] + cuts['tcp-reset'];
      progress('churn', `${Math.round((deadline - Date.now()) / 1000)} s left; ${total} cuts so far`);
    }
    cutting = false;
    await Promise.all(cutters);
    // Every subscriber must end with every element up to the newest one anyone has seen.
    const lastSeq = Math.max(...fleet.subscribers.map((subscriber) => subscriber.lastSeq));
    await fleet.reached(lastSeq, 60_000).catch((error: Error) => progress('churn', error.message));
    const losses = fleet.losses(lastSeq);
    const reconnects = fleet.subscribers.reduce((sum, subscriber) => sum + subscriber.stats.reconnects + subscriber.restarts, 0);
    const totalCuts = cuts['server-close'] + cuts['client-abort'] + cuts['tcp-reset'];
    return {
      name: 'churn',
      weakness: 'elements lost or repeated when connections die and resume with Last-Event-ID',
      seconds: Math.round((performance.now() - started) / 1000),
      figures: {
        subscribers: options.subscribers,
        elements: lastSeq,
        cuts: totalCuts,
        serverCloses: cuts['server-close'],
        clientAborts: cuts['client-abort'],
        tcpResets: cuts['tcp-reset'],
        reconnects,
        missing: losses.missing,
        duplicates: losses.duplicates,
        gaps: losses.gaps,
      },
      checks: [
        check('every subscriber was cut at least once', fleet.subscribers.every((subscriber) => subscriber.stats.reconnects + subscriber.restarts > 0), `${reconnects} reconnections for ${totalCuts} cuts`),
        check('0 missing elements, per subscriber', losses.missing === 0 && losses.neverReceived === 0, `${losses.missing} missing (${losses.neverReceived} subscribers received nothing)`),
        check('0 duplicate elements, per subscriber', losses.duplicates === 0, losses.duplicates),
        check('no gap announced (nothing left the retention window)', losses.gaps === 0, losses.gaps),
      ],
    };
  } finally {
    cutting = false;
    await fleet.stop();
    await Promise.all(relays.map((relay) => relay.close()));
    await publisher.dispose();
  }
}
