import type { SubscribeOptions, SubscriptionEvent } from '../subscribe.js';
import { subscribe } from '../subscribe.js';
import { ContinuousQuery, type QueryResult } from './continuous-query.js';
import type { QueryEngineLoader } from './load-query-engine.js';
import type { RegisteredQuery } from './rspql-parser.js';

export interface RunQueryOptions extends Omit<SubscribeOptions, 'lastEventId' | 'from'> {
  /** Where to read each stream the query names (default: the stream IRI itself). */
  readonly streamUrls?: Readonly<Record<string, string>>;
  /** How often time windows may close on the clock while streams are quiet. Default 250 ms. */
  readonly watermarkIntervalMs?: number;
  /**
   * Start with full time windows: replay each stream's history from now − its longest RANGE, so
   * that the first result, right after the replay, covers [now − RANGE, now). Default true;
   * false starts with empty windows that fill from live elements only.
   */
  readonly replayHistory?: boolean;
  /** How to import Comunica for a query given as text (see `QueryEngineLoader`); a page bundled without it passes its own. */
  readonly loadQueryEngine?: QueryEngineLoader;
  /** Called for gaps, reconnections and decode errors of the streams read. */
  readonly onEvent?: (stream: string, event: Exclude<SubscriptionEvent, { type: 'update' }>) => void;
}

/**
 * Subscribes to every stream a registered query reads and yields a result each time one of its
 * windows closes — on an element, or on the clock (every `watermarkIntervalMs`) — until
 * `signal` aborts. Evaluations run one at a time, in order. With `replayHistory` (the default)
 * time windows are aligned to the start and filled from the streams' history first; the clock
 * closes no window while a history is being replayed, since older elements are still to come.
 * Rejects with `QueryEngineMissingError` before subscribing when Comunica cannot be loaded.
 * A `ContinuousQuery` passed in must not have run yet. Ending the iteration (`break`,
 * `return()`) closes every subscription and clears the clock.
 */
export async function* runContinuousQuery(
  query: string | RegisteredQuery | ContinuousQuery,
  options: RunQueryOptions = {},
): AsyncGenerator<QueryResult> {
  const continuous = query instanceof ContinuousQuery ? query : new ContinuousQuery(query, options.loadQueryEngine ? { loadQueryEngine: options.loadQueryEngine } : {});
  // Before subscribing: a missing query engine is reported at once, not when the first window closes.
  await continuous.prepare();
  const results: QueryResult[] = [];
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  let evaluation = Promise.resolve();
  const evaluate = (step: () => Promise<QueryResult[]>) => {
    evaluation = evaluation
      .then(async () => {
        results.push(...(await step()));
        notify();
      })
      .catch((error: unknown) => {
        failure = error;
        notify();
      });
    return evaluation;
  };

  // The subscriptions are read in the background: when the consumer stops reading the results
  // (`break`, `return()`), nothing else would end them and their connections.
  const reading = new AbortController();
  const stopReading = () => reading.abort();
  options.signal?.addEventListener('abort', stopReading, { once: true });
  if (options.signal?.aborted) stopReading();
  const subscriptions = subscribeToStreams(continuous, options, reading.signal);
  let offsetMs = 0;
  const ticker = setInterval(() => {
    if (subscriptions.some(({ subscription }) => subscription.replaying)) return;
    void evaluate(() => continuous.tick(Date.now() + offsetMs, offsetMs));
  }, options.watermarkIntervalMs ?? 250);
  const readers = subscriptions.map(async ({ stream, subscription }) => {
    for await (const event of subscription) {
      if (event.type !== 'update') {
        options.onEvent?.(stream, event);
        continue;
      }
      if (event.generatedAt === undefined) continue;
      offsetMs = subscription.clockOffset?.offsetMs ?? 0;
      const item = { seq: event.seq, generatedAtMs: event.generatedAt.getTime(), quads: event.quads };
      await evaluate(() => continuous.push(stream, item, offsetMs));
    }
  });
  let finished = false;
  const all = Promise.all(readers).then(
    () => {
      finished = true;
      notify();
    },
    (error: unknown) => {
      failure = error;
      notify();
    },
  );

  try {
    for (;;) {
      while (results.length > 0) yield results.shift() as QueryResult;
      if (failure !== undefined) throw failure;
      if (finished || options.signal?.aborted) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
        void all.then(resolve);
      });
    }
  } finally {
    clearInterval(ticker);
    options.signal?.removeEventListener('abort', stopReading);
    stopReading();
  }
}

/** One subscription to each stream the query reads; with `replayHistory`, from its windows' start. */
function subscribeToStreams(continuous: ContinuousQuery, options: RunQueryOptions, signal: AbortSignal) {
  // The start is on the client's clock: the offset is not measured yet. Windows and history use
  // the same instant, so an offset only shifts which side of the first window's end an element falls.
  const starts = options.replayHistory === false ? new Map<string, Date>() : continuous.startAt(Date.now());
  return continuous.streams.map((stream) => {
    const from = starts.get(stream);
    const subscribeOptions = { ...options, signal, ...(from === undefined ? {} : { from }) };
    return { stream, subscription: subscribe(options.streamUrls?.[stream] ?? stream, subscribeOptions) };
  });
}
