import type { SubscribeOptions, SubscriptionEvent } from '../subscribe.js';
import { subscribe } from '../subscribe.js';
import { ContinuousQuery, type QueryResult } from './continuous-query.js';
import type { RegisteredQuery } from './rspql-parser.js';

export interface RunQueryOptions extends Omit<SubscribeOptions, 'lastEventId'> {
  /** Where to read each stream the query names (default: the stream IRI itself). */
  readonly streamUrls?: Readonly<Record<string, string>>;
  /** How often time windows may close on the clock while streams are quiet. Default 250 ms. */
  readonly watermarkIntervalMs?: number;
  /** Called for gaps, reconnections and decode errors of the streams read. */
  readonly onEvent?: (stream: string, event: Exclude<SubscriptionEvent, { type: 'update' }>) => void;
}

/**
 * Subscribes to every stream a registered query reads and yields a result each time one of its
 * windows closes — on an element, or on the clock (every `watermarkIntervalMs`) — until
 * `signal` aborts. Evaluations run one at a time, in order.
 */
export async function* runContinuousQuery(
  query: string | RegisteredQuery | ContinuousQuery,
  options: RunQueryOptions = {},
): AsyncGenerator<QueryResult> {
  const continuous = query instanceof ContinuousQuery ? query : new ContinuousQuery(query);
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

  let offsetMs = 0;
  const ticker = setInterval(() => void evaluate(() => continuous.tick(Date.now() + offsetMs, offsetMs)), options.watermarkIntervalMs ?? 250);
  const readers = continuous.streams.map(async (stream) => {
    const subscription = subscribe(options.streamUrls?.[stream] ?? stream, options);
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
  }
}
