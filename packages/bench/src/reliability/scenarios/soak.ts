import { request } from 'undici';
import { streamIri, streamResources } from '@rdf-stream/protocol';
import { PollFleetProcess } from '../poll-fleet-process.js';
import { freePort } from '../free-port.js';
import { Ingester, markerIri } from '../ingester.js';
import { memoryFields, MemoryProfile } from '../memory-profile.js';
import { floorOf, rssBytes, Sampler, trendOf } from '../process-probe.js';
import { RestartablePublisher } from '../restartable-publisher.js';
import { check, progress, type ScenarioResult, type Series, sleep } from '../scenario-result.js';
import { SseFleet } from '../sse-fleet.js';

export interface SoakOptions {
  readonly subscribers: number;
  readonly pollers: number;
  readonly minutes: number;
  /** Elements posted before the clients connect (`WARM_UP_BURST_ELEMENTS`). */
  readonly burst: number;
}

export const soakDefaults = (minutes: number): SoakOptions => ({ subscribers: 5_000, pollers: 5_000, minutes, burst: WARM_UP_BURST_ELEMENTS });
export const soakShort = (minutes: number): SoakOptions => ({ subscribers: 500, pollers: 500, minutes: Math.min(minutes, 3), burst: 100 });

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
/**
 * Elements posted before the clients connect, `WARM_UP_BURST_PER_SECOND` (each compressed and
 * written like any other), to a stream of their own, each a copy of the soak stream's element:
 * they bring the allocator's arenas to the size they keep (measured: RSS's floor levels off after about 1 500 elements — 5 a second for
 * 5 minutes — and grows no more; an hour at one element every 2 s is only 1 800 elements, so
 * without them the hour measures the way up to that level, not a leak). A leak per element
 * grows through the burst and on through the measured hour alike.
 */
const WARM_UP_BURST_ELEMENTS = 2_000;
const WARM_UP_BURST_PER_SECOND = 20;
const TOKEN = 'reliability-token-0123456789abcdef';
const CONFIG = `
streams:
  - id: parking
    title: Parking (soak)
    intervalSeconds: ${ELEMENT_INTERVAL_SECONDS}
    source: { kind: simulator }
  - id: warm-up
    title: Warm-up burst (soak)
    source: { kind: ingest, tokenEnv: RELIABILITY_TOKEN }
`;
const POLL_INTERVAL_MS = 5_000;
/** The publisher's cache of decoded elements during the soak (bytes): full within the warm-up. */
const SOAK_LOG_CACHE_BYTES = 4 * 1_048_576;
/**
 * RSS's floor is the lowest sample of each window this long (ms), at most: long enough to hold a
 * full collection (one every minute or two in this run), short enough to give a line many points.
 */
const FLOOR_WINDOW_MS = 2 * 60_000;
/** How often RSS is read for its floor (ms): /proc only, cheap. */
const FLOOR_SAMPLE_MS = 1_000;
/** How often memory and open files are read (ms). */
const SAMPLE_INTERVAL_MS = 10_000;
const MiB = 1_048_576;
const inMiB = (bytes: number) => Math.round((bytes / MiB) * 100) / 100;

/**
 * Soak: SSE subscribers and pollers for a long time. Guards against slow leaks (memory growing
 * with every element, file descriptors not released) that no short test shows.
 */
export async function soakScenario(options: SoakOptions): Promise<ScenarioResult> {
  const started = performance.now();
  const publisher = soakPublisher(options, await freePort());
  await publisher.start();
  const warmUpElements = await warmUpBurst(publisher.url, options.burst);
  const sse = new SseFleet({ eventsUrl: streamResources(streamIri(publisher.url, 'parking')).events, subscribers: options.subscribers });
  const polls = new PollFleetProcess({ latestUrl: streamResources(streamIri(publisher.url, 'parking')).latest, pollers: options.pollers, pollIntervalMs: POLL_INTERVAL_MS });
  const memory = new MemoryProfile(publisher.pid, `${publisher.url}/metrics`, SAMPLE_INTERVAL_MS);
  const files = new Sampler(() => publisher.openFiles(), SAMPLE_INTERVAL_MS);
  const everySecond = new Sampler(() => rssBytes(publisher.pid), FLOOR_SAMPLE_MS);
  try {
    await sse.start();
    progress('soak', `${options.subscribers} SSE subscribers connecting; starting ${options.pollers} pollers (own process)`);
    await polls.start();
    await runFor(options.minutes, publisher, polls);
    memory.stop();
    files.stop();
    everySecond.stop();
    const trend = memoryTrend(memory, everySecond, options.minutes);
    const fds = openFileSpread(files);
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
        warmUpElements,
        polls: polls.stats.requests,
        rssFloorSlopeMiBPerHour: inMiB(trend.rssFloor.perHour),
        rssFloorSlopeStandardErrorMiBPerHour: inMiB(trend.rssFloor.standardErrorPerHour),
        rssFloorWindowSeconds: Math.round(trend.floorWindowMs / 1000),
        rssSlopeMiBPerHour: inMiB(trend.rss.perHour),
        rssSlopeStandardErrorMiBPerHour: inMiB(trend.rss.standardErrorPerHour),
        ...Object.fromEntries(
          memoryFields.filter((field) => field !== 'rss').map((field) => [`${field}SlopeMiBPerHour`, inMiB(trend.byField[field]!.perHour)]),
        ),
        maxRssMiB: Math.round(Math.max(...memory.samples.map((sample) => sample.rss)) / MiB),
        maxHeapUsedMiB: Math.round(Math.max(...memory.samples.map((sample) => sample.heapUsed).filter(Number.isFinite)) / MiB),
        openFilesMin: fds.min,
        openFilesMax: fds.max,
        missing: losses.missing,
      },
      series: [memorySeries(memory, trend.rssFloorPoints)],
      checks: [
        check(
          `RSS slope < 1 MB/h (after warm-up; the floor of each ${Math.round(trend.floorWindowMs / 60_000)}-min window)`,
          trend.rssFloor.perHour < RSS_SLOPE_LIMIT_BYTES_PER_HOUR,
          `${inMiB(trend.rssFloor.perHour)} ± ${inMiB(trend.rssFloor.standardErrorPerHour)} MiB/h (all samples: ${inMiB(trend.rss.perHour)} ± ${inMiB(trend.rss.standardErrorPerHour)})`,
        ),
        check('file descriptors stable within 1 %', fds.spread <= FD_SPREAD_LIMIT, `${fds.min}–${fds.max} (${Math.round(fds.spread * 1000) / 10} %)`),
        check('SSE subscribers lost nothing', losses.missing === 0 && losses.duplicates === 0, `${losses.missing} missing, ${losses.duplicates} duplicate`),
      ],
    };
  } finally {
    memory.stop();
    files.stop();
    everySecond.stop();
    await sse.stop();
    await polls.stop();
    await publisher.dispose();
  }
}

/** The soak's publisher: the simulated stream and the warm-up stream, shedding off, small caches. */
function soakPublisher(options: SoakOptions, port: number): RestartablePublisher {
  return new RestartablePublisher({
    port,
    configYaml: CONFIG,
    env: { RELIABILITY_TOKEN: TOKEN },
    flags: [
      '--max-subscribers', String(options.subscribers + 100),
      '--max-event-loop-turn-ms', '0',
      // The bounded caches are not leaks, but at their defaults (64 MiB of decoded elements) they
      // would still be filling after the warm-up and read as a slope: small, they are full by then.
      '--log-cache-bytes', String(SOAK_LOG_CACHE_BYTES),
    ],
  });
}

/** Lets the fleets run for `minutes`, saying every minute how the publisher is doing. */
async function runFor(minutes: number, publisher: RestartablePublisher, polls: PollFleetProcess): Promise<void> {
  progress('soak', `running for ${minutes} min; an element every ${ELEMENT_INTERVAL_SECONDS} s, a poll every ${POLL_INTERVAL_MS / 1000} s per poller`);
  const deadline = Date.now() + minutes * 60_000;
  while (Date.now() < deadline) {
    await sleep(Math.min(60_000, deadline - Date.now()));
    progress('soak', `${Math.round((deadline - Date.now()) / 60_000)} min left; RSS ${Math.round(rssBytes(publisher.pid) / 1_048_576)} MiB, ${publisher.openFiles()} open files, ${polls.stats.requests} polls`);
  }
}

/** How memory grew after warm-up: every part's slope, and the criterion, RSS's floor. */
function memoryTrend(memory: MemoryProfile, everySecond: Sampler, minutes: number) {
  const settled = memory.after(WARM_UP_FRACTION);
  // Where memory went, after warm-up: RSS is the criterion; its parts tell a leak in our code
  // (the V8 heap grows) from the allocator's or the kernel's (RSS grows, the heap does not).
  const byField = Object.fromEntries(memoryFields.map((field) => [field, trendOf(settled.map((sample) => ({ atMs: sample.atMs, value: sample[field] })))]));
  // The criterion: RSS's floor. Over all samples, RSS swings by tens of MiB with garbage awaiting
  // the next full collection (every minute or two here), and a least-squares slope through
  // that has a standard error of about 2 MiB/h over an hour: twice the limit, it cannot decide.
  // RSS is read every second for the floor, so that each window's lowest sample is a trough.
  const floorWindowMs = Math.min(FLOOR_WINDOW_MS, (minutes * 60_000 * (1 - WARM_UP_FRACTION)) / 6);
  const rssFloorPoints = floorOf(everySecond.samples.slice(Math.floor(everySecond.samples.length * WARM_UP_FRACTION)), floorWindowMs, FLOOR_SAMPLE_MS);
  return { byField, rss: byField.rss!, floorWindowMs, rssFloorPoints, rssFloor: trendOf(rssFloorPoints) };
}

/** The open file descriptors after warm-up: least, most, and their spread over the mean. */
function openFileSpread(files: Sampler): { min: number; max: number; spread: number } {
  const counts = files.samples.slice(Math.floor(files.samples.length * WARM_UP_FRACTION)).map((sample) => sample.value);
  const mean = counts.reduce((sum, value) => sum + value, 0) / Math.max(1, counts.length);
  const min = Math.min(...counts);
  const max = Math.max(...counts);
  return { min, max, spread: (max - min) / mean };
}

/** Every part of the publisher's memory over time, and RSS's floor, for the report's chart. */
function memorySeries(memory: MemoryProfile, rssFloor: ReadonlyArray<{ atMs: number; value: number }>): Series {
  return {
    name: 'memory',
    title: 'publisher memory over time (the first 20 % is warm-up)',
    unit: 'MiB',
    points: [
      ...memory.samples.flatMap((sample) =>
        memoryFields.filter((field) => Number.isFinite(sample[field])).map((field) => ({ seconds: Math.round(sample.atMs / 1000), line: field, value: inMiB(sample[field]) })),
      ),
      ...rssFloor.map((point) => ({ seconds: Math.round(point.atMs / 1000), line: 'rss floor', value: inMiB(point.value) })),
    ],
  };
}

/**
 * Posts `count` copies of the soak stream's element (each with a marker triple, so that no two
 * are the same) to the warm-up stream; resolves with how many were acknowledged.
 */
async function warmUpBurst(baseUrl: string, count: number): Promise<number> {
  const element = await firstElement(streamResources(streamIri(baseUrl, 'parking')).latest);
  const ingester = new Ingester(baseUrl, 'warm-up', TOKEN);
  progress('soak', `warm-up: posting ${count} elements of ${Math.round(element.length / 1024)} kB, ${WARM_UP_BURST_PER_SECOND} a second`);
  const started = performance.now();
  try {
    const acknowledged = await ingester.burst(
      count,
      WARM_UP_BURST_PER_SECOND,
      (marker) => `${element}<${markerIri(marker)}> <http://www.w3.org/2000/01/rdf-schema#label> "warm-up ${marker}" .\n`,
      (posted) => progress('soak', `warm-up: ${posted} of ${count} posted`),
    );
    progress('soak', `warm-up: ${acknowledged} elements acknowledged in ${Math.round((performance.now() - started) / 1000)} s`);
    if (acknowledged !== count) throw new Error(`the warm-up burst had ${count - acknowledged} of ${count} elements refused`);
    return acknowledged;
  } finally {
    await ingester.close();
  }
}

/** The soak stream's first element as N-Triples, once the simulator has published it. */
async function firstElement(latestUrl: string): Promise<string> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const response = await request(latestUrl, { headers: { accept: 'application/n-triples' } });
    const text = await response.body.text();
    if (response.statusCode === 200) return text;
    await sleep(ELEMENT_INTERVAL_SECONDS * 100);
  }
  throw new Error(`${latestUrl} served no element within ${ELEMENT_INTERVAL_SECONDS * 5} s`);
}
