#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import type { Quad } from '@rdfjs/types';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import jsonld from 'jsonld';
import { DataFactory, Writer } from 'n3';
import { isFormatName, sosaStreamContext } from '@rdf-stream/protocol';
import { LatencyRecorder } from './latency/latency-recorder.js';
import { ContinuousQuery, type QueryResult } from './query/continuous-query.js';
import { runContinuousQuery } from './query/run-continuous-query.js';
import { QueryEngineMissingError } from './query/query-engine-missing-error.js';
import { type ResultFormat, ResultDocuments, resultFormats } from './query/result-document.js';
import { RspQlSyntaxError } from './query/rspql-parser.js';
import { type SubscribeOptions, subscribe } from './subscribe.js';
import { SubscriptionError } from './transport/subscription-error.js';

/** Exit statuses (the README's table). */
const exitCodes = Object.freeze({
  /** Ended (`--count`, `--duration`, Ctrl-C) after at least one update or result. */
  ok: 0,
  /** Ended without receiving any update (`subscribe`) or result (`query`). */
  nothingReceived: 1,
  /** The command line, the query or the request is wrong (a server's 4xx refusal): retrying will not help. */
  usage: 2,
  /** The first connection to a stream failed without an HTTP answer (refused, unknown host…). */
  unreachable: 3,
});

/** A failure the command reports in one line (`rdf-stream: …`), no stack, with its exit status. */
class CommandFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CommandFailure';
  }
}

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

/** A stream URL typed by the user: only http(s) can be subscribed to. */
function streamUrl(value: string): string {
  let protocol: string | undefined;
  try {
    protocol = new URL(value).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw new CommandFailure(`${value} is not an http(s) URL`, exitCodes.usage);
  return value;
}

/** A reconnection before anything came from the stream, for want of any HTTP answer: the URL is wrong or the publisher down. */
function unreachable(url: string, event: { type: string; networkError?: string }): CommandFailure | undefined {
  if (event.type !== 'reconnect' || event.networkError === undefined) return undefined;
  return new CommandFailure(`cannot reach ${url}: ${event.networkError}`, exitCodes.unreachable);
}

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
const count = (value: string) => {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 1) throw new InvalidArgumentError('expected a positive whole number');
  return parsed;
};
const format = (value: string) => {
  if (!isFormatName(value)) throw new InvalidArgumentError('expected turtle, trig, ntriples, nquads or jsonld');
  return value;
};

/** What `subscribe --print` writes each update's RDF as. */
const printFormats = ['ntriples', 'nquads', 'turtle', 'jsonld'] as const;
type PrintFormat = (typeof printFormats)[number];

/** The namespaces of the publisher's context (`sosa:`, `prov:`, …), as Turtle prefixes. */
const contextPrefixes: Record<string, string> = Object.fromEntries(
  Object.entries(sosaStreamContext['@context']).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && /[/#]$/.test(entry[1])),
);

/**
 * One update's quads as one document of `format`. N-Triples and Turtle have no graphs: the
 * element's triples are written in the default graph (its graph IRI stays the subject of
 * `prov:generatedAtTime`); N-Quads and JSON-LD keep the named graph. JSON-LD is one line,
 * compacted with the publisher's context (bundled: nothing is fetched).
 */
async function printable(quads: readonly Quad[], format: PrintFormat): Promise<string> {
  const withoutGraphs = format === 'ntriples' || format === 'turtle';
  const written = withoutGraphs ? quads.map((q) => DataFactory.quad(q.subject, q.predicate, q.object)) : [...quads];
  const writer =
    format === 'turtle' ? new Writer({ format: 'Turtle', prefixes: contextPrefixes }) : new Writer({ format: withoutGraphs ? 'N-Triples' : 'N-Quads' });
  const text = await new Promise<string>((resolve, reject) => {
    writer.addQuads(written);
    writer.end((error, result: string) => (error ? reject(error) : resolve(result)));
  });
  if (format !== 'jsonld') return text;
  const expanded = await jsonld.fromRDF(text, { format: 'application/n-quads' });
  const compacted = await jsonld.compact(expanded, sosaStreamContext['@context'] as jsonld.ContextDefinition);
  return `${JSON.stringify(compacted)}\n`;
}

/**
 * Writes to stdout, waiting when the reader is slower. A reader that closes early (`| head`)
 * ends the command quietly with status 0, as other Unix filters do.
 */
function stdoutWriter(): (text: string) => Promise<void> {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(exitCodes.ok);
    throw error;
  });
  return async (text) => {
    if (!process.stdout.write(text)) await new Promise((resolve) => process.stdout.once('drain', resolve));
  };
}

/** Aborts after `durationSeconds` (if given) or on Ctrl-C / SIGTERM. */
function stopController(durationSeconds: number | undefined): AbortController {
  const controller = new AbortController();
  if (durationSeconds !== undefined) setTimeout(() => controller.abort(), durationSeconds * 1000).unref();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => controller.abort());
  return controller;
}

const program = new Command('rdf-stream')
  .description('Consume live RDF streams: print updates with their latency, or run continuous RSP-QL queries.')
  .version(version)
  .showHelpAfterError()
  // Set before the commands are added, so that they inherit it: usage errors exit 2, not 1.
  .exitOverride();

program
  .command('subscribe')
  .description('print each update (seq, latency, transport) and a latency summary at the end')
  .argument('<url>', 'stream URL, e.g. http://127.0.0.1:8080/streams/parking')
  .addOption(new Option('--transport <name>', 'transport').choices(['auto', 'sse', 'websocket', 'poll', 'long-poll']).default('auto'))
  .addOption(new Option('--poll-strategy <name>', 'polling strategy').choices(['smart', 'fixed']).default('smart'))
  .option('--format <name>', 'format to ask for (default: turtle; nquads with --print, to keep the element\'s graph)', format)
  .option('--from <seq|time>', 'replay the history from this sequence number or ISO 8601 time first, then go on live', start)
  .option('--duration <seconds>', 'stop after this many seconds', seconds)
  .option('--count <updates>', 'stop after this many updates', count)
  .addOption(new Option('--print <format>', 'write each update\'s RDF to stdout, one document per update (the summary goes to stderr)').choices(printFormats))
  .action(async (url: string, options: { transport: SubscribeOptions['transport']; pollStrategy: 'smart' | 'fixed'; format?: ReturnType<typeof format>; from?: number | Date; duration?: number; count?: number; print?: PrintFormat }) => {
    streamUrl(url);
    // With --print, stdout carries RDF only: the lines about updates and the summary go to stderr.
    const print = options.print === undefined ? undefined : { format: options.print, write: stdoutWriter() };
    const log = print === undefined ? console.log : console.error;
    const latency = new LatencyRecorder();
    const subscription = subscribe(url, {
      transport: options.transport ?? 'auto',
      pollStrategy: options.pollStrategy,
      // Turtle and N-Triples carry no graph: what --print writes is read as N-Quads unless told otherwise.
      format: options.format ?? (print === undefined ? 'turtle' : 'nquads'),
      ...(options.from === undefined ? {} : { from: options.from }),
      signal: stopController(options.duration).signal,
    });
    let replayed = 0;
    for await (const event of subscription) {
      const failure = latency.count + replayed === 0 ? unreachable(url, event) : undefined;
      if (failure !== undefined) throw failure;
      if (event.type === 'update' && print !== undefined) await print.write(await printable(event.quads, print.format));
      if (event.type === 'update' && event.replayed) {
        replayed++;
        log(`seq=${event.seq ?? '?'}\treplayed\ttriples=${event.quads.length}\t${event.generatedAt?.toISOString() ?? '?'}`);
      } else if (event.type === 'update') {
        latency.record(event.latencyMs);
        log(`seq=${event.seq ?? '?'}\tlatency=${event.latencyMs.toFixed(1)} ms\ttriples=${event.quads.length}\t${event.transport}`);
      } else if (event.type === 'gap') {
        log(`gap after ${event.afterSeq ?? '?'}, resumed at ${event.resumedAtSeq ?? '?'} (${event.reason})`);
      } else if (event.type === 'reconnect') {
        log(`reconnecting in ${event.delayMs} ms: ${event.reason}`);
      } else {
        log(`undecodable element: ${event.error.message}`);
      }
      if (options.count !== undefined && latency.count + replayed >= options.count) break;
    }
    const summary = latency.summary();
    const requestsPerUpdate = subscription.stats.elements === 0 ? 0 : subscription.stats.requests / subscription.stats.elements;
    log(
      `\n${summary.count} updates over ${subscription.transport}${replayed === 0 ? '' : ` after ${replayed} replayed`}; latency ms p50=${summary.p50.toFixed(1)} p90=${summary.p90.toFixed(1)} p99=${summary.p99.toFixed(1)} max=${summary.max.toFixed(1)}` +
        `; requests per update ${requestsPerUpdate.toFixed(2)}; clock offset ${subscription.clockOffset ? `${subscription.clockOffset.offsetMs.toFixed(1)} ± ${subscription.clockOffset.uncertaintyMs.toFixed(1)} ms` : 'not measured'}`,
    );
    if (summary.count + replayed === 0) throw new CommandFailure(`no update from ${url}`, exitCodes.nothingReceived);
  });

program
  .command('query')
  .description('run a continuous RSP-QL query and print its results as windows close')
  .argument('[url]', 'read the query\'s stream from this URL instead of its IRI (single-stream queries)')
  .requiredOption('--query <file>', 'RSP-QL file (REGISTER … FROM NAMED WINDOW … ON <stream> [RANGE … STEP …])')
  .addOption(new Option('--transport <name>', 'transport').choices(['auto', 'sse', 'websocket', 'poll', 'long-poll']).default('sse'))
  .option('--allowed-lateness-ms <ms>', 'how long a time window waits past its end for late elements', (value) => {
    const parsed = Number(value);
    if (!(parsed >= 0)) throw new InvalidArgumentError('expected a non-negative number of milliseconds');
    return parsed;
  }, 500)
  .option('--no-history', 'start with empty windows instead of replaying the last RANGE of each stream')
  .option('--duration <seconds>', 'stop after this many seconds', seconds)
  .option('--count <results>', 'stop after this many results', count)
  .addOption(new Option('--results <format>', 'write each result to stdout as one SPARQL results document (the window lines go to stderr)').choices(Object.keys(resultFormats)))
  .action(async (url: string | undefined, options: { query: string; transport: SubscribeOptions['transport']; allowedLatenessMs: number; history: boolean; duration?: number; count?: number; results?: ResultFormat }) => {
    if (url !== undefined) streamUrl(url);
    const query = new ContinuousQuery(readQuery(options.query), { window: { allowedLatenessMs: options.allowedLatenessMs } });
    const streams = query.streams;
    if (url !== undefined && streams.length !== 1) {
      throw new InvalidArgumentError(`the query reads ${streams.length} streams: give no URL and let it use their IRIs`);
    }
    const urlOf = (stream: string) => (url === undefined ? streamUrl(stream) : url);
    for (const stream of streams) urlOf(stream);
    const stop = stopController(options.duration);
    // With --results, stdout carries the result documents only: the window lines go to stderr.
    const documents = options.results === undefined ? undefined : { serializer: new ResultDocuments(options.results), write: stdoutWriter() };
    let printed = 0;
    let failure: CommandFailure | undefined;
    const results = runContinuousQuery(query, {
      transport: options.transport ?? 'sse',
      replayHistory: options.history,
      signal: stop.signal,
      ...(url === undefined ? {} : { streamUrls: { [streams[0] as string]: url } }),
      onEvent: (stream, event) => {
        failure ??= printed === 0 ? unreachable(urlOf(stream), event) : undefined;
        if (failure !== undefined) stop.abort();
        else console.error(`${stream}: ${event.type}${'reason' in event ? ` (${event.reason})` : ''}`);
      },
    });
    for await (const result of results) {
      const window = result.windows.find((w) => w.name === result.trigger);
      const header = `window ${result.trigger} [${new Date(window?.start ?? 0).toISOString()}, ${new Date(window?.end ?? 0).toISOString()}) ${window?.elements ?? 0} elements, latency ${result.latencyMs.toFixed(0)} ms (evaluation ${result.evaluationMs.toFixed(0)} ms)`;
      if (documents !== undefined) {
        console.error(header);
        await documents.write(await resultDocument(documents.serializer, result));
        printed++;
        if (options.count !== undefined && printed >= options.count) break;
        continue;
      }
      console.log(header);
      if (result.resultType === 'boolean') console.log(`  ${result.boolean}`);
      for (const row of result.bindings ?? []) {
        console.log(`  ${Object.entries(row).map(([name, term]) => `?${name}=${term.value}`).join('  ')}`);
      }
      for (const q of result.quads ?? []) console.log(`  ${q.subject.value} ${q.predicate.value} ${q.object.value}`);
      printed++;
      if (options.count !== undefined && printed >= options.count) break;
    }
    if (failure !== undefined) throw failure;
    if (printed === 0) throw new CommandFailure('no result: no window of the query closed', exitCodes.nothingReceived);
  });

/** One result as a document; a result the format cannot hold (ASK as csv, CONSTRUCT) is a usage error. */
async function resultDocument(serializer: ResultDocuments, result: QueryResult): Promise<string> {
  try {
    return await serializer.write(result);
  } catch (error) {
    throw new CommandFailure(`cannot write the result as ${serializer.format}: ${(error as Error).message}`, exitCodes.usage);
  }
}

/** The query file's text; a file that cannot be read is a usage error. */
function readQuery(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new CommandFailure(`cannot read the query ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, exitCodes.usage);
  }
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  // Commander has printed its own message (and the help, or the version).
  if (error instanceof CommanderError && !(error instanceof InvalidArgumentError)) process.exit(error.exitCode === 0 ? exitCodes.ok : exitCodes.usage);
  if (error instanceof CommandFailure) {
    console.error(`rdf-stream: ${error.message}`);
    process.exit(error.exitCode);
  }
  if (error instanceof SubscriptionError || error instanceof RspQlSyntaxError || error instanceof InvalidArgumentError || error instanceof QueryEngineMissingError) {
    console.error(`rdf-stream: ${error.message}`);
    process.exit(exitCodes.usage);
  }
  throw error;
}
