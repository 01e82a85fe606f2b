/**
 * What a smart poller learns about the stream as it goes, filled in by whoever decodes the
 * elements (`subscribe`) or reads the descriptor: the transport itself sees only text.
 */
export interface PollHints {
  /** The newest element's `prov:generatedAtTime` (ms since the epoch, on the server's clock). */
  generatedAtMs?: number;
  /** The stream's expected interval (ms, the descriptor's `dcat:temporalResolution`); null: irregular. */
  expectedIntervalMs?: number | null;
  /** `serverClock ≈ clientClock + clockOffsetMs`; 0 when unknown. */
  clockOffsetMs?: number;
}

/** The moment a smart poller decides when to ask again. */
export interface PollMoment {
  /** Now, on the client's clock (ms since the epoch). */
  readonly nowMs: number;
  /** Requests since the next element was due that brought nothing new (0 after a new element). */
  readonly lateAttempts: number;
  /** How much longer the newest answer is fresh by its cache headers (ms); the fallback. */
  readonly freshForMs: number;
  /** How long after an element is due the poller asks for it (ms), learnt by `adaptMargin`. */
  readonly marginMs: number;
  /**
   * The last request asked to be held (`Prefer: wait`) and came back with nothing new only when
   * its wait ran out: the publisher holds requests, and one more held request costs it one
   * answer per wait, however late the element is.
   */
  readonly waitRanOut?: boolean;
  /**
   * False once the publisher (or a cache in front of it) was found to answer requests that asked
   * to be held at once (`PollSession`): no request asks to be held any more. Default true.
   */
  readonly publisherHolds?: boolean;
}

export interface SmartPollOptions {
  /** Largest random wait added to every delay (ms), so that thousands of clients do not ask in the same millisecond. */
  readonly jitterMs: number;
  /** Shortest wait between two requests (ms); the first wait when an element is late, doubling after. */
  readonly minPollIntervalMs: number;
  /**
   * Ask a little before the next element is due and let the publisher hold the request until
   * it comes (`Prefer: wait`, its long-poll; see `holdSeconds`): the request is read before the
   * element exists, so that when it comes each poller costs the publisher one write. The
   * requests spread over `holdSpreadMs`, ending `holdLeadMs` before the due moment. False: ask
   * after it, spread over `jitterMs`.
   */
  readonly hold?: boolean;
}

/** How long before an element is due a holding smart poller's last request is sent, at most (ms). */
const HOLD_LEAD_MS = 100;

/**
 * How long the requests of holding smart pollers spread before an element is due (ms): the
 * jitter, at most a quarter of the interval. Each poller draws its moment in that spread, so
 * that thousands of them do not ask in the same millisecond; narrow, so that the publisher
 * reads them together. Measured with 8 000 pollers (docs/bench-results.md): spread over a
 * quarter interval (1.25 s at one element every 5 s), the requests came one by one to an idle
 * publisher, which spent 72–76 µs of CPU per update against 50–53 over 250 ms, at no lower latency.
 */
export function holdSpreadMs(expectedIntervalMs: number, jitterMs: number): number {
  return Math.min(jitterMs, expectedIntervalMs / 4);
}

/**
 * How long before the due moment the spread of held requests ends (ms): 100 ms, at most an
 * eighth of the interval. A request sent at the due moment can reach the publisher after the
 * element, when the client's timer fires late or thousands of requests are read together: then
 * it is read while the publisher answers the others, and answered after them. Sent this much
 * earlier, it is read before the element comes, and answered with the others.
 */
export function holdLeadMs(expectedIntervalMs: number): number {
  return Math.min(HOLD_LEAD_MS, expectedIntervalMs / 8);
}

/** The wait a holding smart poller asks for (whole seconds, `Prefer: wait`): its lead and spread, and a quarter interval of lateness. */
export function holdSeconds(expectedIntervalMs: number, jitterMs: number): number {
  return Math.max(1, Math.ceil((holdLeadMs(expectedIntervalMs) + holdSpreadMs(expectedIntervalMs, jitterMs) + expectedIntervalMs / 4) / 1000));
}

/**
 * The wait a smart poller that does not hold ahead asks for with each request (whole seconds,
 * `Prefer: wait`): a quarter interval, at least a second. An element is served a little after it
 * is stamped (written, compressed; more under load), and the clocks' offset is only known within
 * its uncertainty: a request sent at the due moment may come before the element is served. Held
 * until it is, it is answered with the element: one request per element and no round trip, where
 * a 304 and a second request cost the publisher two requests and the client a round trip, and a
 * back-off of `minPollIntervalMs` and jitter (up to half a second) made the tail of smart
 * polling's latency. An element later than the wait is asked for again at once, held again.
 */
export function lateHoldSeconds(expectedIntervalMs: number): number {
  return Math.max(1, Math.ceil(expectedIntervalMs / 4 / 1000));
}

/**
 * How long a smart poller waits before its next request (ms). For a regular stream whose newest
 * element it knows: until the next element is due (generated + interval, moved onto the client's
 * clock) and the margin the publisher needs to make it available, plus jitter — one request per
 * element when the stream is on time; holding (`hold`), `holdLeadMs` and up to `holdSpreadMs`
 * before that moment instead, the publisher answering when the element comes. When that moment
 * has passed without a new element: at once after the first request that found nothing, asking
 * to be held (not holding ahead: `lateHoldSeconds`), and at once again after each held request
 * whose wait ran out; from a publisher that does not hold (or after a request that came back
 * unchanged before its wait ran out), `minPollIntervalMs`, doubling with each request that finds
 * nothing, at most a quarter of the interval. For an irregular stream or before the first
 * element: while the cached answer is fresh (cache headers), at least `minPollIntervalMs`.
 */
export function smartPollDelay(hints: PollHints, moment: PollMoment, options: SmartPollOptions, random: () => number = Math.random): number {
  const draw = random();
  const jitter = Math.round(draw * options.jitterMs);
  const { generatedAtMs, expectedIntervalMs } = hints;
  if (generatedAtMs === undefined || expectedIntervalMs === undefined || expectedIntervalMs === null || expectedIntervalMs <= 0) {
    return Math.max(options.minPollIntervalMs, moment.freshForMs) + jitter;
  }
  const dueAtMs = generatedAtMs + expectedIntervalMs - (hints.clockOffsetMs ?? 0) + moment.marginMs;
  if (moment.lateAttempts === 0 && dueAtMs > moment.nowMs) {
    if (!options.hold) return dueAtMs - moment.nowMs + jitter;
    return Math.max(0, dueAtMs - holdLeadMs(expectedIntervalMs) - Math.round(draw * holdSpreadMs(expectedIntervalMs, options.jitterMs)) - moment.nowMs);
  }
  const holds = moment.publisherHolds !== false;
  // Late, from a publisher that holds: not holding ahead, the first request that found nothing is
  // followed at once by one the publisher holds (`lateHoldSeconds`); a held request whose wait ran
  // out, by another at once — the wait paces them, one request per wait, and the element is
  // answered the moment it comes, where a back-off would add up to a quarter interval.
  if (holds && (moment.waitRanOut === true || (!options.hold && moment.lateAttempts === 1))) return 0;
  const doublings = moment.lateAttempts - (options.hold || !holds ? 1 : 2);
  const ceiling = Math.max(options.minPollIntervalMs, expectedIntervalMs / 4);
  return Math.round(Math.min(ceiling, options.minPollIntervalMs * 2 ** Math.max(0, doublings))) + jitter;
}

/** Least and most a margin grows to when an element was not there at its due moment (ms, fraction of the interval). */
const MARGIN_FLOOR_MS = 20;
const MARGIN_CEILING_SHARE = 0.25;
/** How a margin shrinks after each element found at the first request: slowly, so that misses stay rare. */
const MARGIN_DECAY = 0.95;
/**
 * The most a margin grows to after a miss, as a multiple of how late the element came: it
 * doubles otherwise, so that one element very late (a pause, a burst of load) moves it by one
 * doubling, not to that lateness.
 */
const MARGIN_AFTER_MISS = 1.5;

/**
 * Learns how long after its due moment an element can be fetched: an element is stamped when it
 * is generated and is served a little later (rendered, logged), and the clocks' offset is only
 * known within its uncertainty. After an element that needed `lateAttempts` requests beyond the
 * first, the margin doubles (at least 20 ms), but to no more than 1.5 × how long after its due
 * moment the element came (`servedAfterDueMs`, on the client's clock, the answer's transfer
 * included, when known) and a quarter of the interval; after one the first request found, it
 * shrinks by 5 %. A miss costs a request (and, from a publisher that holds the second one, no
 * latency), a margin costs latency: in the steady state, about one element in eight is missed
 * (≈ 1.1 requests per element).
 */
export function adaptMargin(marginMs: number, lateAttempts: number, expectedIntervalMs: number | null | undefined, servedAfterDueMs?: number): number {
  if (lateAttempts === 0) return marginMs * MARGIN_DECAY;
  const ceiling = expectedIntervalMs ? expectedIntervalMs * MARGIN_CEILING_SHARE : MARGIN_FLOOR_MS;
  const doubled = Math.max(MARGIN_FLOOR_MS, marginMs * 2);
  const measured = servedAfterDueMs === undefined ? doubled : Math.max(MARGIN_FLOOR_MS, servedAfterDueMs * MARGIN_AFTER_MISS);
  return Math.min(ceiling, doubled, measured);
}
