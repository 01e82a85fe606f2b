import type { Quad } from '@rdfjs/types';
import { DataFactory, Parser } from 'n3';
import { DecodeError, decodeElement } from './decode/decode-element.js';
import { type FormatName, mediaTypes } from './formats.js';
import { type ClockOffset, measureClockOffset } from './latency/clock-offset.js';
import type { BackoffOptions } from './transport/backoff.js';
import { longPollTransport } from './transport/long-poll-transport.js';
import { type PollStrategy, pollTransport } from './transport/poll-transport.js';
import { sseTransport } from './transport/sse-transport.js';
import type { GapEvent, ReconnectEvent, TransportEvent, TransportName } from './transport/transport-event.js';
import { emptyStats, type TransportStats } from './transport/transport-stats.js';

export interface SubscribeOptions {
  /** `auto` reads the stream descriptor and takes SSE when offered, else polling. Default `auto`. */
  readonly transport?: TransportName | 'auto';
  /** Default `turtle` (the cheapest to decode). */
  readonly format?: FormatName;
  /** Polling: `smart` (default) or `fixed`, see `pollTransport`. */
  readonly pollStrategy?: PollStrategy;
  /** Fixed polling: pause after each response. Default 500 ms, as in the study. */
  readonly pollIntervalMs?: number;
  /** Smart polling: random extra wait, so that clients do not poll in step. Default 250 ms. */
  readonly jitterMs?: number;
  /** Smart polling: shortest wait between requests. Default 250 ms. */
  readonly minPollIntervalMs?: number;
  /** Long-polling: `Prefer: wait=N`. Default 30 s. */
  readonly longPollWaitSeconds?: number;
  /** SSE: resume after this id. */
  readonly lastEventId?: string;
  /** SSE: largest event accepted. Default 4 MiB. */
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
}

/** One element as the client got it. Times on the client's clock unless said otherwise. */
export interface StreamUpdate {
  readonly type: 'update';
  readonly seq: number | undefined;
  readonly graph: string | undefined;
  /** `prov:generatedAtTime` of the element, on the server's clock. */
  readonly generatedAt: Date | undefined;
  readonly receivedAt: Date;
  /** receivedAt − generatedAt, corrected by the clock offset; NaN without a timestamp. */
  readonly latencyMs: number;
  readonly quads: Quad[];
  /** Size of the decoded text (UTF-16 code units, ≈ bytes for RDF). */
  readonly bytes: number;
  readonly transport: TransportName;
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
}

const defaultBackoff: BackoffOptions = { initialDelayMs: 1_000, maxDelayMs: 30_000 };

/**
 * Subscribes to a stream (`{base}/streams/{id}`) that follows the publisher's HTTP contract:
 * an async iterable of updates, gaps, reconnections and decode errors, until `signal` aborts or
 * the loop breaks. Throws `SubscriptionError` when the server refuses for good.
 */
export function subscribe(streamUrl: string, options: SubscribeOptions = {}): Subscription {
  const stats = emptyStats();
  const state: { transport: TransportName | undefined; clockOffset: ClockOffset | undefined } = {
    transport: undefined,
    clockOffset: undefined,
  };
  const base = streamUrl.replace(/\/+$/, '');
  return {
    stats,
    get transport() {
      return state.transport;
    },
    get clockOffset() {
      return state.clockOffset;
    },
    async *[Symbol.asyncIterator]() {
      const { format = 'turtle', signal, fetch: fetchImpl = fetch } = options;
      const offsetMs = await resolveOffset(base, options, fetchImpl, state);
      const transport = options.transport === undefined || options.transport === 'auto' ? await chooseTransport(base, fetchImpl, signal) : options.transport;
      state.transport = transport;
      let lastSeq: number | undefined;
      for await (const event of openTransport(transport, base, format, options, stats)) {
        if (event.type !== 'element') {
          yield event;
          if (event.type === 'gap') lastSeq = undefined;
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
        const seq = decoded.seq ?? (event.id === undefined ? undefined : Number(event.id));
        if (transport === 'sse' && lastSeq !== undefined && seq !== undefined && seq > lastSeq + 1) {
          yield { type: 'gap', afterSeq: lastSeq, resumedAtSeq: seq, reason: 'sequence-jump' };
        }
        if (seq !== undefined) lastSeq = seq;
        const generatedAtMs = decoded.generatedAt?.getTime() ?? Number.NaN;
        yield {
          type: 'update',
          seq,
          graph: decoded.graph,
          generatedAt: decoded.generatedAt,
          receivedAt: new Date(event.receivedAt),
          latencyMs: event.receivedAt + offsetMs - generatedAtMs,
          quads: decoded.quads,
          bytes: event.text.length,
          transport,
        };
      }
    },
  };
}

function openTransport(
  transport: TransportName,
  base: string,
  format: FormatName,
  options: SubscribeOptions,
  stats: TransportStats,
): AsyncGenerator<TransportEvent> {
  const backoff = options.backoff ?? defaultBackoff;
  const common = { format, backoff, stats, ...(options.signal ? { signal: options.signal } : {}), ...(options.fetch ? { fetch: options.fetch } : {}) };
  switch (transport) {
    case 'sse':
      return sseTransport(`${base}/events`, {
        ...common,
        maxEventBytes: options.maxEventBytes ?? 4 * 1024 * 1024,
        ...(options.lastEventId === undefined ? {} : { lastEventId: options.lastEventId }),
      });
    case 'poll':
      return pollTransport(`${base}/latest`, {
        ...common,
        strategy: options.pollStrategy ?? 'smart',
        pollIntervalMs: options.pollIntervalMs ?? 500,
        jitterMs: options.jitterMs ?? 250,
        minPollIntervalMs: options.minPollIntervalMs ?? 250,
      });
    case 'long-poll':
      return longPollTransport(`${base}/latest`, { ...common, waitSeconds: options.longPollWaitSeconds ?? 30 });
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

const SSE_MEDIA_TYPE = 'https://www.iana.org/assignments/media-types/text/event-stream';

/** Reads the stream descriptor: SSE when it offers an event-stream distribution, else polling. */
export async function chooseTransport(base: string, fetchImpl: typeof fetch = fetch, signal?: AbortSignal): Promise<TransportName> {
  try {
    const response = await fetchImpl(base, { headers: { accept: mediaTypes.turtle }, signal: signal ?? null });
    if (!response.ok) return 'poll';
    const quads = new Parser({ baseIRI: base }).parse(await response.text());
    const offersSse = quads.some(
      (q) =>
        q.predicate.equals(DataFactory.namedNode('http://www.w3.org/ns/dcat#mediaType')) &&
        (q.object.value === SSE_MEDIA_TYPE || q.object.value === 'text/event-stream'),
    );
    return offersSse ? 'sse' : 'poll';
  } catch {
    return 'poll';
  }
}
