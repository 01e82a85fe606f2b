import { PollFleetProcess } from '../poll-fleet-process.js';
import { freePort } from '../free-port.js';
import { rssBytes, Sampler } from '../process-probe.js';
import { PublisherProcess } from '../publisher-process.js';
import { check, progress, type ScenarioResult, sleep } from '../scenario-result.js';
import { SseFleet } from '../sse-fleet.js';

export interface SoakOptions {
  readonly subscribers: number;
  readonly pollers: number;
  readonly minutes: number;
}

export const soakDefaults = (minutes: number): SoakOptions => ({ subscribers: 5_000, pollers: 5_000, minutes });
export const soakShort = (minutes: number): SoakOptions => ({ subscribers: 500, pollers: 500, minutes: Math.min(minutes, 3) });

/** The first part of the run is warm-up (caches filling, JIT): left out of the slopes. */
const WARM_UP_FRACTION = 0.2;
const RSS_SLOPE_LIMIT_BYTES_PER_HOUR = 1_048_576;
const FD_SPREAD_LIMIT = 0.01;
/**
 * One element every 2 s (720 elements an hour at the default interval of 5 s would be few), and a
 * poll every 5 s per poller: 2 500 SSE events and 1 000 polls a second, which the client fleets
 * (in two processes) can drive beside the publisher on our two cores.
 */
const ELEMENT_INTERVAL_SECONDS = 2;
const POLL_INTERVAL_MS = 5_000;
/** The publisher's cache of decoded elements during the soak (bytes): full within the warm-up. */
const SOAK_LOG_CACHE_BYTES = 4 * 1_048_576;

/**
 * Soak: SSE subscribers and pollers for a long time. Guards against slow leaks (memory growing
 * with every element, file descriptors not released) that no short test shows.
 */
export async function soakScenario(options: SoakOptions): Promise<ScenarioResult> {
  const started = performance.now();
  const publisher = new PublisherProcess({
    port: await freePort(),
    flags: [
      '--interval', String(ELEMENT_INTERVAL_SECONDS),
      '--max-subscribers', String(options.subscribers + 100),
      '--max-event-loop-turn-ms', '0',
      // The bounded caches are not leaks, but at their defaults (64 MiB of decoded elements) they
      // would still be filling after the warm-up and read as a slope: small, they are full by then.
      '--log-cache-bytes', String(SOAK_LOG_CACHE_BYTES),
    ],
  });
  await publisher.start();
  const sse = new SseFleet({ eventsUrl: `${publisher.url}/streams/parking/events`, subscribers: options.subscribers });
  const polls = new PollFleetProcess({ latestUrl: `${publisher.url}/streams/parking/latest`, pollers: options.pollers, pollIntervalMs: POLL_INTERVAL_MS });
  const rss = new Sampler(() => rssBytes(publisher.pid), 10_000);
  const files = new Sampler(() => publisher.openFiles(), 10_000);
  try {
    await sse.start();
    progress('soak', `${options.subscribers} SSE subscribers connecting; starting ${options.pollers} pollers (own process)`);
    await polls.start();
    progress('soak', `running for ${options.minutes} min; an element every ${ELEMENT_INTERVAL_SECONDS} s, a poll every ${POLL_INTERVAL_MS / 1000} s per poller`);
    const deadline = Date.now() + options.minutes * 60_000;
    while (Date.now() < deadline) {
      await sleep(Math.min(60_000, deadline - Date.now()));
      progress('soak', `${Math.round((deadline - Date.now()) / 60_000)} min left; RSS ${Math.round(rssBytes(publisher.pid) / 1_048_576)} MiB, ${publisher.openFiles()} open files, ${polls.stats.requests} polls`);
    }
    rss.stop();
    files.stop();
    const settled = (sampler: Sampler) => sampler.samples.slice(Math.floor(sampler.samples.length * WARM_UP_FRACTION));
    const rssSlope = Sampler.slopeOf(settled(rss));
    const fileCounts = settled(files).map((sample) => sample.value);
    const meanFiles = fileCounts.reduce((sum, value) => sum + value, 0) / Math.max(1, fileCounts.length);
    const fileSpread = (Math.max(...fileCounts) - Math.min(...fileCounts)) / meanFiles;
    const lastSeq = Math.max(...sse.subscribers.map((subscriber) => subscriber.lastSeq));
    await sse.reached(lastSeq, 60_000).catch((error: Error) => progress('soak', error.message));
    const losses = sse.losses(lastSeq);
    return {
      name: 'soak',
      weakness: 'slow leaks: memory growing with every element, file descriptors not released',
      seconds: Math.round((performance.now() - started) / 1000),
      figures: {
        subscribers: options.subscribers,
        pollers: options.pollers,
        minutes: options.minutes,
        polls: polls.stats.requests,
        rssSlopeMiBPerHour: Math.round((rssSlope / 1_048_576) * 100) / 100,
        maxRssMiB: Math.round(rss.max / 1_048_576),
        openFilesMin: Math.min(...fileCounts),
        openFilesMax: Math.max(...fileCounts),
        missing: losses.missing,
      },
      checks: [
        check('RSS slope < 1 MB/h (after warm-up)', rssSlope < RSS_SLOPE_LIMIT_BYTES_PER_HOUR, `${Math.round((rssSlope / 1_048_576) * 100) / 100} MiB/h`),
        check('file descriptors stable within 1 %', fileSpread <= FD_SPREAD_LIMIT, `${Math.min(...fileCounts)}–${Math.max(...fileCounts)} (${Math.round(fileSpread * 1000) / 10} %)`),
        check('SSE subscribers lost nothing', losses.missing === 0 && losses.duplicates === 0, `${losses.missing} missing, ${losses.duplicates} duplicate`),
      ],
    };
  } finally {
    rss.stop();
    files.stop();
    await sse.stop();
    await polls.stop();
    await publisher.dispose();
  }
}
