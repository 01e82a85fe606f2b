import { streamIri, streamResources } from '@rdf-stream/protocol';
import { freePort } from '../free-port.js';
import { percentile } from '../process-probe.js';
import { RestartablePublisher } from '../restartable-publisher.js';
import { check, timedCheck, progress, type ScenarioResult, sleep } from '../scenario-result.js';
import { SseFleet } from '../sse-fleet.js';

export interface DrainOptions {
  readonly subscribers: number;
  readonly shutdownTimeoutMs: number;
  readonly sseRetryMs: number;
  readonly shutdownRetryJitterMs: number;
}

export const drainDefaults: DrainOptions = { subscribers: 10_000, shutdownTimeoutMs: 10_000, sseRetryMs: 2_000, shutdownRetryJitterMs: 5_000 };
export const drainShort: DrainOptions = { subscribers: 300, shutdownTimeoutMs: 10_000, sseRetryMs: 1_000, shutdownRetryJitterMs: 2_000 };
/**
 * The subscribers' own backoff: a first retry sooner than the server's `retry:` would hide whether
 * the server spread them; the client adds at most `initialDelayMs` of its own jitter on top.
 */
const CLIENT_BACKOFF = { initialDelayMs: 100, maxDelayMs: 1_000 } as const;

/**
 * Drain: SIGTERM under subscribers, then start again on the same log and port. Guards against a
 * shutdown that overruns its deadline, a thundering herd of reconnections at the same instant,
 * and elements lost across the restart.
 */
export async function drainScenario(options: DrainOptions = drainDefaults): Promise<ScenarioResult> {
  const started = performance.now();
  const publisher = new RestartablePublisher({
    port: await freePort(),
    flags: [
      // One element a second: 10 000 subscribers' events are what the harness can read.
      '--interval', '1',
      '--facilities', '2',
      '--max-subscribers', String(options.subscribers + 100),
      '--shutdown-timeout-ms', String(options.shutdownTimeoutMs),
      '--sse-retry-ms', String(options.sseRetryMs),
      '--shutdown-retry-jitter-ms', String(options.shutdownRetryJitterMs),
    ],
  });
  await publisher.start();
  const fleet = new SseFleet({
    eventsUrl: streamResources(streamIri(publisher.url, 'parking')).events,
    subscribers: options.subscribers,
    backoff: CLIENT_BACKOFF,
  });
  try {
    await fleet.start();
    const firstSeq = Math.max(...fleet.subscribers.map((subscriber) => subscriber.lastSeq)) + 2;
    await fleet.reached(firstSeq, 60_000).catch(async (error: Error) => {
      const metrics = await (await fetch(`${publisher.url}/metrics`)).text();
      const lagging = fleet.subscribers.filter((subscriber) => subscriber.lastSeq < firstSeq);
      progress('drain', `${error.message}; publisher: ${metrics.split('\n').filter((line) => /^rdf_stream_subscribers\{|shed|evicted/.test(line)).join('; ')}; lagging: ${JSON.stringify(lagging.slice(0, 3).map((subscriber) => ({ ...subscriber.stats, first: subscriber.firstSeq, restarts: subscriber.restarts })))}`);
      throw error;
    });
    progress('drain', `${options.subscribers} subscribers connected; SIGTERM`);
    const signalledAt = performance.now();
    const stopped = await publisher.stop('SIGTERM');
    const firstReconnections = fleet.reconnections.filter((entry) => entry.atMs >= signalledAt).slice(0, options.subscribers);
    const delays = firstReconnections.map((entry) => entry.delayMs);
    progress('drain', `exited with ${stopped.code ?? stopped.signal} after ${stopped.exitMs} ms; restarting`);
    await publisher.start();
    progress('drain', 'serving again; subscribers resume');
    await sleep(options.sseRetryMs + options.shutdownRetryJitterMs + 2_000);
    const lastSeq = Math.max(...fleet.subscribers.map((subscriber) => subscriber.lastSeq));
    await fleet.reached(lastSeq, 60_000).catch((error: Error) => progress('drain', error.message));
    const losses = fleet.losses(lastSeq);
    const p10 = Math.round(percentile([...delays], 10));
    const p90 = Math.round(percentile([...delays], 90));
    const windowMs = options.shutdownRetryJitterMs;
    return {
      name: 'drain',
      weakness: 'a shutdown that overruns its deadline, every subscriber reconnecting at the same instant, elements lost across a restart',
      seconds: Math.round((performance.now() - started) / 1000),
      figures: {
        subscribers: options.subscribers,
        exitMs: stopped.exitMs,
        exitCode: String(stopped.code ?? stopped.signal),
        reconnectDelayP10Ms: p10,
        reconnectDelayP90Ms: p90,
        reconnectDelayMaxMs: Math.max(0, ...delays),
        missing: losses.missing,
        duplicates: losses.duplicates,
      },
      checks: [
        timedCheck(`exit 0 within shutdownTimeoutMs (${options.shutdownTimeoutMs} ms)`, stopped.code === 0 && stopped.exitMs <= options.shutdownTimeoutMs, `exit ${stopped.code ?? stopped.signal} after ${stopped.exitMs} ms`),
        check(
          `reconnections spread over the jitter window (${options.sseRetryMs}–${options.sseRetryMs + windowMs} ms, plus the client's own ≤ ${CLIENT_BACKOFF.initialDelayMs} ms)`,
          delays.length >= options.subscribers * 0.99 &&
            p10 >= options.sseRetryMs &&
            p90 - p10 >= windowMs * 0.5 &&
            Math.max(...delays) <= options.sseRetryMs + windowMs + CLIENT_BACKOFF.initialDelayMs,
          `${delays.length} reconnections; delays p10 ${p10} ms, p90 ${p90} ms, max ${Math.max(0, ...delays)} ms`,
        ),
        check('0 lost, 0 duplicate after resuming', losses.missing === 0 && losses.duplicates === 0 && losses.neverReceived === 0, `${losses.missing} missing, ${losses.duplicates} duplicate`),
      ],
    };
  } finally {
    await fleet.stop();
    await publisher.dispose();
  }
}
