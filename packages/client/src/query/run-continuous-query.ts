import type { SubscribeOptions, SubscriptionEvent } from '../subscribe.js';
import { subscribe } from '../subscribe.js';
import { ContinuousQuery, type QueryResult } from './continuous-query.js';
import type { RegisteredQuery } from './rspql-parser.js';

export interface RunQueryOptions extends Omit<SubscribeOptions, 'lastEventId'> {
  /** Where to read each stream the query names (default: the stream IRI itself). */
  readonly streamUrls?: Readonly<Record<string, string>>;
  /** Called for gaps, reconnections and decode errors of the streams read. */
  readonly onEvent?: (stream: string, event: Exclude<SubscriptionEvent, { type: 'update' }>) => void;
}

/**
 * Subscribes to every stream a registered query reads and yields a result each time one of
 * its windows closes, until `signal` aborts.
 */
export async function* runContinuousQuery(query: string | RegisteredQuery | ContinuousQuery, options: RunQueryOptions = {}): AsyncGenerator<QueryResult> {
  const continuous = query instanceof ContinuousQuery ? query : new ContinuousQuery(query);
  const results: QueryResult[] = [];
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  // Window closes are evaluated one at a time, in arrival order, whatever the stream.
  let evaluation = Promise.resolve();
  const readers = continuous.streams.map(async (stream) => {
    const subscription = subscribe(options.streamUrls?.[stream] ?? stream, options);
    for await (const event of subscription) {
      if (event.type !== 'update') {
        options.onEvent?.(stream, event);
        continue;
      }
      if (event.generatedAt === undefined) continue;
      const item = { seq: event.seq, generatedAtMs: event.generatedAt.getTime(), quads: event.quads };
      const offsetMs = subscription.clockOffset?.offsetMs ?? 0;
      evaluation = evaluation.then(async () => {
        results.push(...(await continuous.push(stream, item, offsetMs)));
        notify();
      });
      await evaluation;
    }
  });
  const all = Promise.all(readers).then(
    () => notify(),
    (error: unknown) => {
      failure = error;
      notify();
    },
  );
  let finished = false;
  void all.then(() => (finished = true));
  for (;;) {
    while (results.length > 0) yield results.shift() as QueryResult;
    if (failure !== undefined) throw failure;
    if (finished || options.signal?.aborted) return;
    await new Promise<void>((resolve) => {
      wake = resolve;
      void all.then(resolve);
    });
  }
}
