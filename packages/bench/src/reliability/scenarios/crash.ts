import { parseElementId, streamIri, streamResources } from '@rdf-stream/protocol';
import { freePort } from '../free-port.js';
import { type IngestAttempt, Ingester, markerOf, type ResendAnswer } from '../ingester.js';
import { watchFirstAnswer } from '../probe.js';
import { RestartablePublisher } from '../restartable-publisher.js';
import { type Check, check, timedCheck, progress, type ScenarioResult, sleep } from '../scenario-result.js';
import { SseFleet } from '../sse-fleet.js';

export interface CrashOptions {
  readonly subscribers: number;
  readonly ingestPerSecond: number;
  readonly killAfterSeconds: number;
  readonly ingestAfterRestartSeconds: number;
}

export const crashDefaults: CrashOptions = { subscribers: 10_000, ingestPerSecond: 2, killAfterSeconds: 20, ingestAfterRestartSeconds: 10 };
export const crashShort: CrashOptions = { subscribers: 200, ingestPerSecond: 50, killAfterSeconds: 4, ingestAfterRestartSeconds: 3 };

const TOKEN = 'reliability-token-0123456789abcdef';
const CONFIG = `
streams:
  - id: sensors
    title: Sensors pushing observations (reliability scenario)
    source: { kind: ingest, tokenEnv: RELIABILITY_TOKEN }
`;
/** How soon the publisher must serve again after `kill -9` (ms). */
const BACK_WITHIN_MS = 5_000;

/**
 * Crash: `kill -9` under subscribers and steady ingest, then start again on the same log.
 * Guards against acknowledged elements lost (a 201 before the write was durable), elements
 * written twice, ids reused after a restart, and subscribers that cannot resume across it.
 * Every element carries an `Idempotency-Key`; after the restart, every request that got no
 * answer is sent again with its key (what a client does), and every acknowledged one too: an
 * element stored but not acknowledged before the kill must be answered, not written twice, and an
 * acknowledged key must answer its element as a replay.
 */
export async function crashScenario(options: CrashOptions = crashDefaults): Promise<ScenarioResult> {
  const started = performance.now();
  const publisher = new RestartablePublisher({
    port: await freePort(),
    configYaml: CONFIG,
    env: { RELIABILITY_TOKEN: TOKEN },
    flags: ['--max-subscribers', String(options.subscribers + 100)],
  });
  await publisher.start();
  const eventsUrl = streamResources(streamIri(publisher.url, 'sensors')).events;
  const fleet = new SseFleet({ eventsUrl, subscribers: options.subscribers, backoff: { initialDelayMs: 500, maxDelayMs: 5_000 } });
  // Four requests in flight at once: the kill finds some stored but not yet answered.
  const ingester = new Ingester(publisher.url, 'sensors', TOKEN, { idempotencyKeys: true, concurrency: 4 });
  const collected = new Map<number, number[]>();
  const collector = markerCollector(eventsUrl, collected);
  try {
    await fleet.start();
    ingester.start(options.ingestPerSecond);
    progress('crash', `${options.subscribers} subscribers, ingest at ${options.ingestPerSecond}/s; kill -9 in ${options.killAfterSeconds} s`);
    await sleep(options.killAfterSeconds * 1_000);
    const { backMs, startedMs } = await killAndRestart(publisher, ingester);
    await sleep(options.ingestAfterRestartSeconds * 1_000);
    await ingester.stop();
    const resent = await resendAfterRestart(ingester);
    await ingester.close();
    const retriedAnswered = [...resent.retries].filter(([, answer]) => answer.status === 201 && answer.id !== undefined);
    const acknowledged = [
      ...resent.firstAcknowledged,
      ...retriedAnswered.map(([attempt, answer]) => ({ ...attempt, acknowledgedId: answer.id })),
    ];
    // Wherever an answer points (a replay that was not one is a new element): the collector reads up to there.
    const lastSeq = Math.max(...acknowledged.map((attempt) => seqOf(attempt.acknowledgedId!)), ...resent.replayIds.map(seqOf));
    const epochs = new Set(acknowledged.map((attempt) => parseElementId(attempt.acknowledgedId!)!.epoch));
    await fleet.reached(lastSeq, 120_000).catch((error: Error) => progress('crash', error.message));
    await collector.start();
    await collector.reached(lastSeq, 60_000).catch((error: Error) => progress('crash', error.message));

    const lostAcknowledged = acknowledged.filter((attempt) => {
      const seqs = collected.get(attempt.marker) ?? [];
      return seqs.length !== 1 || seqs[0] !== seqOf(attempt.acknowledgedId!);
    });
    const losses = fleet.losses(lastSeq);
    const figures = {
      subscribers: options.subscribers,
      acknowledged: acknowledged.length,
      unacknowledged: resent.unacknowledged.length,
      // A retry answered as a replay: its element was stored before the kill, but not acknowledged.
      unacknowledgedKept: retriedAnswered.filter(([, answer]) => answer.replayed).length,
      retriedAnswered: retriedAnswered.length,
      replayed: resent.firstAcknowledged.length,
      replayMismatches: resent.replayMismatches,
      // Elements stored twice (one marker under two sequence numbers): a retry that was not recognised.
      duplicateElements: [...collected.values()].filter((seqs) => seqs.length > 1).length,
      backMs,
      startedMs,
      lastSeq,
      missing: losses.missing,
      duplicates: losses.duplicates,
    };
    return {
      name: 'crash',
      weakness: 'acknowledged elements lost or doubled by kill -9; subscribers unable to resume across a restart',
      seconds: Math.round((performance.now() - started) / 1000),
      figures,
      checks: crashChecks(figures, { lostAcknowledged: lostAcknowledged.length, epochs: epochs.size, neverReceived: losses.neverReceived }),
    };
  } finally {
    await ingester.close().catch(() => undefined);
    await fleet.stop();
    await collector.stop();
    await publisher.dispose();
  }
}

const seqOf = (id: string) => parseElementId(id)!.seq;

/** One subscriber reading the whole log from its start, noting under which sequence numbers each marker came. */
function markerCollector(eventsUrl: string, collected: Map<number, number[]>): SseFleet {
  return new SseFleet({
    eventsUrl,
    subscribers: 1,
    // A bare number is an id of no life of this log: the publisher replays all it retains.
    lastEventId: '0',
    onElement: (_subscriber, seq, text) => {
      const marker = markerOf(text);
      if (marker !== undefined) collected.set(marker, [...(collected.get(marker) ?? []), seq]);
    },
  });
}

/** What must hold after the crash, from the scenario's figures and three counts beside them. */
function crashChecks(
  figures: { backMs: number; acknowledged: number; unacknowledged: number; unacknowledgedKept: number; retriedAnswered: number; replayed: number; replayMismatches: number; duplicateElements: number; missing: number; duplicates: number },
  { lostAcknowledged, epochs, neverReceived }: { lostAcknowledged: number; epochs: number; neverReceived: number },
): Check[] {
  const { backMs, acknowledged, unacknowledged, unacknowledgedKept, retriedAnswered, replayed, replayMismatches, duplicateElements, missing, duplicates } = figures;
  return [
    timedCheck(`serving again within ${BACK_WITHIN_MS / 1000} s of kill -9`, backMs <= BACK_WITHIN_MS, `${backMs} ms`),
    check('every acknowledged element present once, under the id it was acknowledged with', lostAcknowledged === 0, `${lostAcknowledged} of ${acknowledged} not so`),
    check('no element written twice; one life of the log (no id reused)', duplicateElements === 0 && epochs === 1, `${duplicateElements} twice, ${epochs} epoch(s)`),
    check(
      'every request without an answer, sent again with its Idempotency-Key after the restart, answered (201) once',
      retriedAnswered === unacknowledged,
      `${retriedAnswered} of ${unacknowledged} answered, ${unacknowledgedKept} of them as replays of an element stored before the kill`,
    ),
    check(
      'every acknowledged Idempotency-Key sent again after kill -9 answers its element (same id, Idempotent-Replayed)',
      replayMismatches === 0,
      `${replayMismatches} of ${replayed} not so`,
    ),
    check('subscribers resumed with 0 missing, 0 duplicate', missing === 0 && duplicates === 0 && neverReceived === 0, `${missing} missing, ${duplicates} duplicate, ${neverReceived} never served`),
  ];
}

/**
 * `kill -9`, then starts the publisher again on the same log. Resolves with how long after the
 * kill it served again (`backMs`: the first 200 from /health on a fresh connection) and every
 * source had started (`startedMs`).
 */
async function killAndRestart(publisher: RestartablePublisher, ingester: Ingester): Promise<{ backMs: number; startedMs: number }> {
  // Watched from a process of its own (this one drives thousands of subscribers, whose
  // reconnections would delay it).
  const watcher = watchFirstAnswer(`${publisher.url}/health`);
  await watcher.ready;
  const killedAt = Date.now();
  const acknowledgedBeforeKill = ingester.acknowledged;
  await publisher.stop('SIGKILL');
  watcher.start();
  const restartedAt = Date.now();
  await publisher.start();
  const startedMs = Date.now() - killedAt;
  const backMs = (await watcher.answeredAt) - killedAt;
  progress(
    'crash',
    `killed after ${acknowledgedBeforeKill} acknowledged elements; gone after ${restartedAt - killedAt} ms, serving again after ${backMs} ms, every source started (GET /health) after ${startedMs} ms`,
  );
  return { backMs, startedMs };
}

/**
 * What a client does after the restart: every request that got no answer sent again with its
 * `Idempotency-Key`, and every acknowledged one too, which must answer its element as a replay.
 */
async function resendAfterRestart(ingester: Ingester) {
  const unacknowledged = ingester.attempts.filter((attempt) => attempt.acknowledgedId === undefined);
  const retries = new Map<IngestAttempt, ResendAnswer>();
  for (const attempt of unacknowledged) retries.set(attempt, await ingester.resend(attempt));
  const firstAcknowledged = ingester.attempts.filter((attempt) => attempt.acknowledgedId !== undefined);
  let replayMismatches = 0;
  const replayIds: string[] = [];
  for (const attempt of firstAcknowledged) {
    const answer = await ingester.resend(attempt);
    if (answer.id !== undefined) replayIds.push(answer.id);
    if (answer.status !== 201 || answer.id !== attempt.acknowledgedId || !answer.replayed) replayMismatches++;
  }
  return { unacknowledged, retries, firstAcknowledged, replayMismatches, replayIds };
}
