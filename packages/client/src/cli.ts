#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { isFormatName } from '@rdf-stream/protocol';
import { LatencyRecorder } from './latency/latency-recorder.js';
import { ContinuousQuery } from './query/continuous-query.js';
import { runContinuousQuery } from './query/run-continuous-query.js';
import { RspQlSyntaxError } from './query/rspql-parser.js';
import { type SubscribeOptions, subscribe } from './subscribe.js';
import { SubscriptionError } from './transport/subscription-error.js';

const seconds = (value: string) => {
  const parsed = Number(value);
  if (!(parsed > 0)) throw new InvalidArgumentError('expected a positive number of seconds');
  return parsed;
};
/** `--from`: a sequence number, or a time in ISO 8601 (`2026-11-22T16:20:00Z`). */
const start = (value: string): number | Date => {
  if (/^\d{1,15}$/.test(value)) return Number(value);
  const time = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(time)) throw new InvalidArgumentError('expected a sequence number or an ISO 8601 date-time');
  return new Date(time);
};
const format = (value: string) => {
  if (!isFormatName(value)) throw new InvalidArgumentError('expected turtle, trig, ntriples, nquads or jsonld');
  return value;
};

/** Aborts after `durationSeconds` (if given) or on Ctrl-C / SIGTERM. */
function stopSignal(durationSeconds: number | undefined): AbortSignal {
  const controller = new AbortController();
  if (durationSeconds !== undefined) setTimeout(() => controller.abort(), durationSeconds * 1000).unref();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => controller.abort());
  return controller.signal;
}

const program = new Command('rdf-stream')
  .description('Consume live RDF streams: print updates with their latency, or run continuous RSP-QL queries.')
  .showHelpAfterError();

program
  .command('subscribe')
  .description('print each update (seq, latency, transport) and a latency summary at the end')
  .argument('<url>', 'stream URL, e.g. http://127.0.0.1:8080/streams/parking')
  .addOption(new Option('--transport <name>', 'transport').choices(['auto', 'sse', 'poll', 'long-poll']).default('auto'))
  .addOption(new Option('--poll-strategy <name>', 'polling strategy').choices(['smart', 'fixed']).default('smart'))
  .option('--format <name>', 'format to ask for', format, 'turtle')
  .option('--from <seq|time>', 'replay the history from this sequence number or ISO 8601 time first, then go on live', start)
  .option('--duration <seconds>', 'stop after this many seconds', seconds)
  .action(async (url: string, options: { transport: SubscribeOptions['transport']; pollStrategy: 'smart' | 'fixed'; format: ReturnType<typeof format>; from?: number | Date; duration?: number }) => {
    const latency = new LatencyRecorder();
    const subscription = subscribe(url, {
      transport: options.transport ?? 'auto',
      pollStrategy: options.pollStrategy,
      format: options.format,
      ...(options.from === undefined ? {} : { from: options.from }),
      signal: stopSignal(options.duration),
    });
    let replayed = 0;
    for await (const event of subscription) {
      if (event.type === 'update' && event.replayed) {
        replayed++;
        console.log(`seq=${event.seq ?? '?'}\treplayed\ttriples=${event.quads.length}\t${event.generatedAt?.toISOString() ?? '?'}`);
      } else if (event.type === 'update') {
        latency.record(event.latencyMs);
        console.log(`seq=${event.seq ?? '?'}\tlatency=${event.latencyMs.toFixed(1)} ms\ttriples=${event.quads.length}\t${event.transport}`);
      } else if (event.type === 'gap') {
        console.log(`gap after ${event.afterSeq ?? '?'}, resumed at ${event.resumedAtSeq ?? '?'} (${event.reason})`);
      } else if (event.type === 'reconnect') {
        console.log(`reconnecting in ${event.delayMs} ms: ${event.reason}`);
      } else {
        console.log(`undecodable element: ${event.error.message}`);
      }
    }
    const summary = latency.summary();
    const requestsPerUpdate = subscription.stats.elements === 0 ? 0 : subscription.stats.requests / subscription.stats.elements;
    console.log(
      `\n${summary.count} updates over ${subscription.transport}${replayed === 0 ? '' : ` after ${replayed} replayed`}; latency ms p50=${summary.p50.toFixed(1)} p90=${summary.p90.toFixed(1)} p99=${summary.p99.toFixed(1)} max=${summary.max.toFixed(1)}` +
        `; requests per update ${requestsPerUpdate.toFixed(2)}; clock offset ${subscription.clockOffset ? `${subscription.clockOffset.offsetMs.toFixed(1)} ± ${subscription.clockOffset.uncertaintyMs.toFixed(1)} ms` : 'not measured'}`,
    );
  });

program
  .command('query')
  .description('run a continuous RSP-QL query and print its results as windows close')
  .argument('[url]', 'read the query\'s stream from this URL instead of its IRI (single-stream queries)')
  .requiredOption('--query <file>', 'RSP-QL file (REGISTER … FROM NAMED WINDOW … ON <stream> [RANGE … STEP …])')
  .addOption(new Option('--transport <name>', 'transport').choices(['auto', 'sse', 'poll', 'long-poll']).default('sse'))
  .option('--allowed-lateness-ms <ms>', 'how long a time window waits past its end for late elements', (value) => {
    const parsed = Number(value);
    if (!(parsed >= 0)) throw new InvalidArgumentError('expected a non-negative number of milliseconds');
    return parsed;
  }, 500)
  .option('--no-history', 'start with empty windows instead of replaying the last RANGE of each stream')
  .option('--duration <seconds>', 'stop after this many seconds', seconds)
  .action(async (url: string | undefined, options: { query: string; transport: SubscribeOptions['transport']; allowedLatenessMs: number; history: boolean; duration?: number }) => {
    const query = new ContinuousQuery(readFileSync(options.query, 'utf8'), { window: { allowedLatenessMs: options.allowedLatenessMs } });
    const streams = query.streams;
    if (url !== undefined && streams.length !== 1) {
      throw new InvalidArgumentError(`the query reads ${streams.length} streams: give no URL and let it use their IRIs`);
    }
    const results = runContinuousQuery(query, {
      transport: options.transport ?? 'sse',
      replayHistory: options.history,
      signal: stopSignal(options.duration),
      ...(url === undefined ? {} : { streamUrls: { [streams[0] as string]: url } }),
      onEvent: (stream, event) => console.error(`${stream}: ${event.type}${'reason' in event ? ` (${event.reason})` : ''}`),
    });
    for await (const result of results) {
      const window = result.windows.find((w) => w.name === result.trigger);
      const header = `window ${result.trigger} [${new Date(window?.start ?? 0).toISOString()}, ${new Date(window?.end ?? 0).toISOString()}) ${window?.elements ?? 0} elements, latency ${result.latencyMs.toFixed(0)} ms (evaluation ${result.evaluationMs.toFixed(0)} ms)`;
      console.log(header);
      if (result.resultType === 'boolean') console.log(`  ${result.boolean}`);
      for (const row of result.bindings ?? []) {
        console.log(`  ${Object.entries(row).map(([name, term]) => `?${name}=${term.value}`).join('  ')}`);
      }
      for (const q of result.quads ?? []) console.log(`  ${q.subject.value} ${q.predicate.value} ${q.object.value}`);
    }
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof SubscriptionError || error instanceof RspQlSyntaxError || error instanceof InvalidArgumentError) {
    console.error(`rdf-stream: ${error.message}`);
    process.exit(2);
  }
  throw error;
}
