import type { DatasetCore, Quad } from '@rdfjs/types';
import { Parser, Store } from 'n3';
import {
  catalogueTerms,
  EVENT_STREAM_MEDIA_TYPE,
  type FormatName,
  mediaTypeIri,
  mediaTypes,
  parseDayTimeDuration,
  parseEventId,
  streamResources,
} from '@rdf-stream/protocol';
import { DecodeError, decodeElement } from './decode/decode-element.js';
import { type DeltaEvent, deltaFeed } from './decode/delta-feed.js';
import { type Observation, observationsOf } from './decode/observations.js';
import { type ClockOffset, measureClockOffset } from './latency/clock-offset.js';
import type { BackoffOptions } from './transport/backoff.js';
import { type HistoryPosition, historyReader, type HistoryStart } from './transport/history-reader.js';
import type { PollHints } from './transport/poll-schedule.js';
import type { PollStrategy } from './transport/poll-session.js';
import { longPollTransport, pollTransport } from './transport/poll-transport.js';
import { sseTransport } from './transport/sse-transport.js';
import { webSocketTransport } from './transport/web-socket-transport.js';
import type { GapEvent, ReconnectEvent, TransportEvent, TransportName } from './transport/transport-event.js';
import { emptyStats, type TransportStats } from './transport/transport-stats.js';

export interface SubscribeOptions {
  /**
   * `auto` reads the stream descriptor and takes SSE when offered, else polling (never the
   * WebSocket: ask for `websocket`). Default `auto`.
   */
  readonly transport?: TransportName | 'auto';
  /** Default `turtle` (the cheapest to decode). */
  readonly format?: FormatName;
  /**
   * Polling: `smart` (default: one request when the next element is due, from the descriptor's
   * interval, the newest element's time and the clock offset; see `smartPollDelay`) or `fixed`
   * (the study's clients), see `pollTransport`.
   */
  readonly pollStrategy?: PollStrategy;
  /** Fixed polling: pause after each response. Default 500 ms, as in the study. */
  readonly pollIntervalMs?: number;
  /** Smart polling: random extra wait, so that clients do not poll in step. Default 250 ms. */
  readonly jitterMs?: number;
  /** Smart polling: shortest wait between requests, and the first wait when an element is late. Default 250 ms. */
  readonly minPollIntervalMs?: number;
  /**
   * Smart polling on a regular stream: ask shortly before the next element is due (100 ms, and
   * up to `jitterMs` more: `holdLeadMs`, `holdSpreadMs`) with `Prefer: wait`, held by the
   * publisher until the element comes: lower latency, at 1.2–1.5 × the publisher's CPU per
   * update (the requests, spread out, are read a few at a time, not in one burst). Default
   * false: ask at the due moment (with `Prefer: wait` too, held only until the element is served).
   */
  readonly pollHold?: boolean;
  /** Long-polling: `Prefer: wait=N`. Default 30 s. */
  readonly longPollWaitSeconds?: number;
  /** SSE and WebSocket: resume after this id. Not with `from`. */
  readonly lastEventId?: string;
  /**
   * Replay the stream's history first, from this element on: a sequence number of the log's
   * current epoch, or a time (elements generated at or after it, on the server's clock). The
   * history pages are read, then live delivery takes over right after the last element they
   * showed (SSE: as `Last-Event-ID`, WebSocket: `?lastEventId=`; polling: older sequence numbers are skipped), with no
   * gap and no duplicate. Replayed updates have `replayed: true` and no latency.
   */
  readonly from?: HistoryStart;
  /** SSE and WebSocket: largest event (message) accepted, in UTF-16 code units. Default 4 MiB. */
  readonly maxEventBytes?: number;
  /** Reconnection backoff. Default 1 s doubling up to 30 s, with full jitter. */
  readonly backoff?: BackoffOptions;
  /**
   * Clock offset to the server for latency correction: `measure` (default) asks the
   * publisher's `/time` a few times (0 when it has none), a number fixes it, `false` ignores it.
   */
  readonly clockOffset?: 'measure' | number | false;
  readonly signal?: AbortSignal;
  readonly fetch?: typeof fetch;
  /**
   * Receive what changed instead of whole elements: `subscribe` then reads `/latest` (the
   * snapshot) into an n3 `Store`, follows the stream's `/patches` (RDF Patch over SSE) and keeps
   * the store equal to `/latest` after every patch, reading the snapshot again on a gap. Its
   * events are `DeltaEvent`s (see `DeltaSubscription`); `transport`, `format` and `from` do not apply.
   */
  readonly deltas?: boolean;
  /**
   * Smart polling without `subscribe`'s decoding (`streamEvents`): what the caller knows of the
   * stream, updated as it reads each element's time. `subscribe` fills its own.
   */
  readonly pollHints?: PollHints;
}

/** One element as the client got it. Times on the client's clock unless said otherwise. */
export interface StreamUpdate {
  readonly type: 'update';
  readonly seq: number | undefined;
  readonly graph: string | undefined;
  /** `prov:generatedAtTime` of the element, on the server's clock. */
  readonly generatedAt: Date | undefined;
  readonly receivedAt: Date;
  /**
   * receivedAt − generatedAt, corrected by the clock offset; NaN without a timestamp and for a
   * replayed element (its age is not a delivery latency: `LatencyRecorder` skips NaN).
   */
  readonly latencyMs: number;
  readonly quads: Quad[];
  /**
   * The SOSA observations of `quads` as plain values (`observationsOf`), computed on first read
   * and kept: a subscriber that reads only the quads pays nothing for them.
   */
  readonly observations: readonly Observation[];
  /** Size of the decoded text (UTF-16 code units, ≈ bytes for RDF). */
  readonly bytes: number;
  /** The subscription's live transport (a replayed element was read from the history pages). */
  readonly transport: TransportName;
  /** Read from the history (`from`), not delivered live. */
  readonly replayed: boolean;
}

/** An element that could not be decoded: reported, skipped, the subscription goes on. */
export interface DecodeErrorEvent {
  readonly type: 'error';
  readonly error: DecodeError;
}

export type SubscriptionEvent = StreamUpdate | GapEvent | ReconnectEvent | DecodeErrorEvent;

export interface Subscription extends AsyncIterable<SubscriptionEvent> {
  readonly stats: TransportStats;
  /** Known once iteration has started. */
  readonly transport: TransportName | undefined;
  readonly clockOffset: ClockOffset | undefined;
  /**
   * True from the start until every replayed element (`from`) has been handed over and live
   * delivery begins; always false without `from`. Time windows wait for it to close on the clock.
   */
  readonly replaying: boolean;
}

/**
 * What `subscribe` and `streamEvents` give the transports when the options say nothing: what
 * users get, and what the benchmark's fleet runs with.
 */
export const transportDefaults = Object.freeze({
  backoff: Object.freeze({ initialDelayMs: 1_000, maxDelayMs: 30_000 }) as BackoffOptions,
  /** Largest SSE event or WebSocket message (bytes). */
  maxEventBytes: 4 * 1024 * 1024,
  pollStrategy: 'smart' as PollStrategy,
  pollIntervalMs: 500,
  jitterMs: 250,
  minPollIntervalMs: 250,
  pollHold: false,
  longPollWaitSeconds: 30,
});

/** A subscription to a stream's patches (`deltas: true`): `store` always equals the `/latest` last reached. */
export interface DeltaSubscription extends AsyncIterable<DeltaEvent> {
  readonly stats: TransportStats;
  /**
   * The local copy of `/latest` (its default graph, as N-Triples carries it): an n3 `Store`,
   * typed as an RDF/JS `DatasetCore` so that the published declarations need no `@types/n3`.
   */
  readonly store: DatasetCore;
}

/**
 * Subscribes to a stream (`{base}/streams/{id}`) that follows the publisher's HTTP contract:
 * an async iterable of updates, gaps, reconnections and decode errors, until `signal` aborts or
 * the loop breaks. Throws `SubscriptionError` when the server refuses for good. With `deltas:
 * true`, an iterable of snapshots and RDF patches over a local store instead (`DeltaSubscription`).
 */
export function subscribe(streamUrl: string, options: SubscribeOptions & { readonly deltas: true }): DeltaSubscription;
export function subscribe(streamUrl: string, options?: SubscribeOptions): Subscription;
export function subscribe(streamUrl: string, options: SubscribeOptions = {}): Subscription | DeltaSubscription {
  if (options.deltas === true) return subscribeDeltas(streamUrl.replace(/\/+$/, ''), options);
  checkStart(options);
  const stats = emptyStats();
  const state: SubscriptionState = { transport: undefined, clockOffset: undefined, replaying: options.from !== undefined };
  const base = streamUrl.replace(/\/+$/, '');
  return {
    stats,
    get transport() {
      return state.transport;
    },
    get clockOffset() {
      return state.clockOffset;
    },
    get replaying() {
      return state.replaying;
    },
    [Symbol.asyncIterator]() {
      // Ending the iteration aborts what the subscription is waiting for (see `stoppable`).
      return stoppable((signal) => subscriptionEvents({ base, options: { ...options, signal }, state, stats }), options.signal);
    },
  };
}

/** Throws when `from` and `lastEventId` are both given, or `from` is no sequence number nor valid date. */
function checkStart({ from, lastEventId }: SubscribeOptions): void {
  if (from === undefined) return;
  if (lastEventId !== undefined) throw new TypeError('subscribe takes `from` or `lastEventId`, not both');
  const valid = typeof from === 'number' ? Number.isSafeInteger(from) && from >= 0 : !Number.isNaN(from.getTime());
  if (!valid) throw new RangeError('`from` must be a sequence number (a non-negative integer) or a valid Date');
}

/** What a subscription tells of itself while it runs. */
interface SubscriptionState {
  transport: TransportName | undefined;
  clockOffset: ClockOffset | undefined;
  replaying: boolean;
}

/** One iteration of a subscription; `options.signal` is aborted when the iteration ends. */
interface SubscriptionRun {
  readonly base: string;
  readonly options: SubscribeOptions;
  readonly state: SubscriptionState;
  readonly stats: TransportStats;
}

/** Where delivery stands: the last sequence number seen, and what live delivery must skip. */
interface DeliveryPosition {
  lastSeq: number | undefined;
  /** Live elements the replay covered already, or before `from`: skipped until a newer one comes. */
  skip: { readonly epoch: string | undefined; readonly throughSeq: number } | undefined;
}

/** The subscription's events: each element decoded, with its latency; gaps, reconnections and decode errors. */
async function* subscriptionEvents(run: SubscriptionRun): AsyncGenerator<SubscriptionEvent> {
  const { base, options, state } = run;
  const fetchImpl = options.fetch ?? fetch;
  const offsetMs = await resolveOffset(base, options, fetchImpl, state);
  const { transport, expectedIntervalMs } = await liveTransport(base, options, fetchImpl);
  state.transport = transport;
  const pollHints: PollHints = { clockOffsetMs: offsetMs, expectedIntervalMs };
  const position: DeliveryPosition = { lastSeq: undefined, skip: undefined };

  for await (const event of replayThenLive(run, transport, pollHints, position)) {
    // `replayThenLive` is paused on this event, so `replaying` still says where it came from.
    const replayed = state.replaying;
    if (event.type !== 'element') {
      yield event;
      if (event.type === 'gap') position.lastSeq = undefined;
      continue;
    }
    let decoded;
    try {
      decoded = await decodeElement(event.text, event.format);
    } catch (error) {
      if (!(error instanceof DecodeError)) throw error;
      yield { type: 'error', error };
      continue;
    }
    const seq = decoded.seq ?? (event.id === undefined ? undefined : parseEventId(event.id)?.seq);
    const { lastSeq } = position;
    if (!replayed && (transport === 'sse' || transport === 'websocket') && lastSeq !== undefined && seq !== undefined && seq > lastSeq + 1) {
      yield { type: 'gap', afterSeq: lastSeq, resumedAtSeq: seq, reason: 'sequence-jump' };
    }
    if (seq !== undefined) position.lastSeq = seq;
    if (!replayed && coveredByReplay(position, seq, decoded.epoch)) continue;
    const generatedAtMs = decoded.generatedAt?.getTime() ?? Number.NaN;
    // The poll transport reads it when this update has been handed over: the next is due an interval later.
    if (!replayed && Number.isFinite(generatedAtMs)) pollHints.generatedAtMs = generatedAtMs;
    const quads = decoded.quads;
    let observations: readonly Observation[] | undefined;
    yield {
      type: 'update',
      seq,
      graph: decoded.graph,
      generatedAt: decoded.generatedAt,
      receivedAt: new Date(event.receivedAt),
      // A replayed element's age is not a delivery latency.
      latencyMs: replayed ? Number.NaN : event.receivedAt + offsetMs - generatedAtMs,
      quads,
      get observations() {
        return (observations ??= observationsOf(quads));
      },
      bytes: event.text.length,
      transport,
      replayed,
    };
  }
}

/**
 * The transport asked for; with `auto`, SSE when the stream descriptor offers it, else polling.
 * With the stream's interval, from the descriptor, for smart polling.
 */
async function liveTransport(
  base: string,
  options: SubscribeOptions,
  fetchImpl: typeof fetch,
): Promise<{ readonly transport: TransportName; readonly expectedIntervalMs: number | null }> {
  const auto = options.transport === undefined || options.transport === 'auto';
  // The descriptor says whether SSE is offered and how often elements come (smart polling).
  const descriptor = auto || (options.transport === 'poll' && options.pollStrategy !== 'fixed') ? await readDescriptor(base, fetchImpl, options.signal) : undefined;
  return {
    transport: auto ? (descriptor?.offersSse ? 'sse' : 'poll') : (options.transport as TransportName),
    expectedIntervalMs: descriptor?.expectedIntervalMs ?? null,
  };
}

/**
 * The history pages from `from`, if given, then the live transport from right after the last
 * element they showed. Records the hand-over in `position`, and clears `replaying` when live
 * delivery begins.
 */
async function* replayThenLive(
  { base, options, state, stats }: SubscriptionRun,
  transport: TransportName,
  pollHints: PollHints,
  position: DeliveryPosition,
): AsyncGenerator<TransportEvent> {
  const { from } = options;
  let live = options;
  if (from !== undefined) {
    const handOver: HistoryPosition = yield* historyReader(streamResources(base).history, { from, ...transportCommons(options), stats });
    position.lastSeq = handOver.lastSeq;
    position.skip = { epoch: handOver.epoch, throughSeq: Math.max(handOver.lastSeq ?? 0, typeof from === 'number' ? from - 1 : 0) };
    if (handOver.lastId !== undefined) live = { ...options, lastEventId: handOver.lastId };
  }
  state.replaying = false;
  yield* openTransport(transport, base, options.format ?? 'turtle', { ...live, pollHints }, stats);
}

/** Whether live delivery must skip this element (the replay showed it); stops skipping at the first newer one. */
function coveredByReplay(position: DeliveryPosition, seq: number | undefined, epoch: string | undefined): boolean {
  const { skip } = position;
  if (skip === undefined) return false;
  const sameLife = skip.epoch === undefined || epoch === undefined || epoch === skip.epoch;
  if (seq !== undefined && sameLife && seq <= skip.throughSeq) return true;
  // Live delivery is in order: once an element is newer, so are the next ones.
  position.skip = undefined;
  return false;
}

function subscribeDeltas(base: string, options: SubscribeOptions): DeltaSubscription {
  if (options.from !== undefined || options.lastEventId !== undefined) throw new TypeError('`deltas` starts from the snapshot: not with `from` or `lastEventId`');
  const stats = emptyStats();
  let store: DatasetCore = new Store();
  return {
    stats,
    get store() {
      return store;
    },
    [Symbol.asyncIterator]() {
      return stoppable(async function* (signal) {
        for await (const event of deltaFeed(base, {
          ...transportCommons({ ...options, signal }),
          maxEventBytes: options.maxEventBytes ?? transportDefaults.maxEventBytes,
          stats,
        })) {
          if (event.type === 'snapshot') store = event.store;
          yield event;
        }
      }, options.signal);
    },
  };
}

/**
 * The iterator of `generate(signal)`, whose `return()` (what `break` calls) also aborts `signal`:
 * an async generator's own `return()` waits for a pending `next()` to settle, which for a quiet
 * stream may be never; aborting makes the pending request or wait end at once.
 */
function stoppable<T>(generate: (signal: AbortSignal) => AsyncGenerator<T>, outer: AbortSignal | undefined): AsyncIterator<T> & AsyncIterable<T> {
  const stop = new AbortController();
  const generator = generate(outer === undefined ? stop.signal : AbortSignal.any([outer, stop.signal]));
  return {
    next: () => generator.next(),
    return: (value?: unknown) => {
      stop.abort();
      return generator.return(value);
    },
    throw: (error?: unknown) => generator.throw(error),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * One transport's raw events — each element's text as received, gaps, reconnections — with the
 * defaults `subscribe` uses (reconnection, backoff, `Last-Event-ID`, caching, polling schedule)
 * but no RDF decoding and no clock offset: the lean mode of a fleet of thousands of clients
 * (the benchmark), which reads what it needs from the payload itself.
 */
export function streamEvents(
  streamUrl: string,
  transport: TransportName,
  options: Omit<SubscribeOptions, 'transport' | 'from' | 'clockOffset'> = {},
  stats: TransportStats = emptyStats(),
): AsyncGenerator<TransportEvent> {
  return openTransport(transport, streamUrl.replace(/\/+$/, ''), options.format ?? 'turtle', options, stats);
}

/** What every transport takes from the subscription's options. */
function transportCommons(options: SubscribeOptions) {
  return {
    backoff: options.backoff ?? transportDefaults.backoff,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
}

function openTransport(
  transport: TransportName,
  base: string,
  format: FormatName,
  options: SubscribeOptions,
  stats: TransportStats,
): AsyncGenerator<TransportEvent> {
  const common = { format, stats, ...transportCommons(options) };
  const resources = streamResources(base);
  switch (transport) {
    case 'sse':
      return sseTransport(resources.events, {
        ...common,
        maxEventBytes: options.maxEventBytes ?? transportDefaults.maxEventBytes,
        ...(options.lastEventId === undefined ? {} : { lastEventId: options.lastEventId }),
      });
    case 'websocket':
      return webSocketTransport(resources.webSocket, {
        ...common,
        maxEventBytes: options.maxEventBytes ?? transportDefaults.maxEventBytes,
        ...(options.lastEventId === undefined ? {} : { lastEventId: options.lastEventId }),
      });
    case 'poll':
      return pollTransport(resources.latest, {
        ...common,
        strategy: options.pollStrategy ?? transportDefaults.pollStrategy,
        pollIntervalMs: options.pollIntervalMs ?? transportDefaults.pollIntervalMs,
        jitterMs: options.jitterMs ?? transportDefaults.jitterMs,
        minPollIntervalMs: options.minPollIntervalMs ?? transportDefaults.minPollIntervalMs,
        hold: options.pollHold ?? transportDefaults.pollHold,
        ...(options.pollHints ? { hints: options.pollHints } : {}),
      });
    case 'long-poll':
      return longPollTransport(resources.latest, { ...common, waitSeconds: options.longPollWaitSeconds ?? transportDefaults.longPollWaitSeconds });
  }
}

async function resolveOffset(
  base: string,
  options: SubscribeOptions,
  fetchImpl: typeof fetch,
  state: { clockOffset: ClockOffset | undefined },
): Promise<number> {
  const { clockOffset = 'measure' } = options;
  if (clockOffset === false) return 0;
  if (typeof clockOffset === 'number') return clockOffset;
  const timeUrl = new URL('/time', base).href;
  state.clockOffset = await measureClockOffset(timeUrl, { fetch: fetchImpl, ...(options.signal ? { signal: options.signal } : {}) }).catch(
    () => undefined,
  );
  return state.clockOffset?.offsetMs ?? 0;
}

/** What a client reads of a stream descriptor before it subscribes. */
export interface StreamDescriptorFacts {
  /** It offers an event-stream (SSE) distribution. */
  readonly offersSse: boolean;
  /** `dcat:temporalResolution` in milliseconds; null for an irregular stream (or none stated). */
  readonly expectedIntervalMs: number | null;
}

/** Reads the stream descriptor (Turtle); undefined when it cannot be read. */
export async function readDescriptor(base: string, fetchImpl: typeof fetch = fetch, signal?: AbortSignal): Promise<StreamDescriptorFacts | undefined> {
  try {
    const response = await fetchImpl(base, { headers: { accept: mediaTypes.turtle }, signal: signal ?? null });
    if (!response.ok) return undefined;
    const quads = new Parser({ baseIRI: base }).parse(await response.text());
    const offersSse = quads.some(
      (q) =>
        q.predicate.value === catalogueTerms.mediaType &&
        (q.object.value === mediaTypeIri(EVENT_STREAM_MEDIA_TYPE) || q.object.value === EVENT_STREAM_MEDIA_TYPE),
    );
    // The stream's resolution: the descriptor describes one stream, named by the publisher's base
    // URL (which is not the URL a client behind a proxy used when they differ).
    const resolutions = quads.filter((q) => q.predicate.value === catalogueTerms.temporalResolution);
    const resolution = resolutions.find((q) => q.subject.value === base) ?? resolutions[0];
    return { offersSse, expectedIntervalMs: (resolution && parseDayTimeDuration(resolution.object.value)) ?? null };
  } catch {
    return undefined;
  }
}
