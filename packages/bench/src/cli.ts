#!/usr/bin/env node
import { Command, InvalidArgumentError, Option } from 'commander';
import { join, resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
import { streamIri, streamResources } from '@rdf-stream/protocol';
import { DEFAULT_GZIP_VERIFY_SAMPLE, type GzipVerifySample, parseGzipVerifySample } from './fleet/gzip-verify-sample.js';
import { type BenchMode, benchModes, type PollStrategyName, pollStrategyNames } from './fleet/worker-protocol.js';
import { analyzeMal } from './analyze/mal.js';
import { capacityPlan, type PushTransport } from './analyze/capacity-plan.js';
import { measureThroughput, type ThroughputResult } from './collect/throughput.js';
import { connectionMemoryRows } from './analyze/memory-per-connection.js';
import { capacityTable } from './report/capacity-table.js';
import { memoryTable } from './report/memory-table.js';
import { studyTable } from './report/study-table.js';
import { resultTable, writeResults } from './report/write-results.js';
import { startProxy, startPublisher, stopProxy } from './scenario/services.js';
import { type BenchOptions, defaultPollIntervalMs, facilitiesForPayload } from './scenario/bench-options.js';
import { runOne, type RunSummary } from './scenario/run-benchmark.js';
import { DEFAULT_CLIENTS_PER_SOURCE_ADDRESS, DEFAULT_SOURCE_ADDRESSES, MAX_SOURCE_ADDRESSES, SourcePortsExhaustedError } from './scenario/source-addresses.js';
import { type Appendfsync, appendfsyncPolicies } from './process/private-valkey.js';
import { goalRows, goalTable } from './report/goals.js';
import { logComparison, logComparisonTable } from './report/log-comparison.js';
import { instanceTable } from './report/instance-table.js';
import { runUpstreamScenario, upstreamTable } from './scenario/run-upstream.js';
import { nchanMissing } from './process/private-nchan.js';
import { peerComparison, peerComparisonTable } from './report/peer-comparison.js';

const positive = (what: string) => (value: string) => {
  const parsed = Number(value);
  if (!(parsed > 0)) throw new InvalidArgumentError(`${what} must be a positive number`);
  return parsed;
};
const clientList = (value: string) => {
  const counts = value.split(',').map((part) => Number(part.trim()));
  if (counts.some((count) => !Number.isInteger(count) || count < 1)) throw new InvalidArgumentError('expected N or a list N,N,…');
  return counts;
};

/** A comma-separated list of `choices` (each once, in the order given). */
const choiceList =
  <T extends string>(choices: readonly T[]) =>
  (value: string): T[] => {
    const items = [...new Set(value.split(',').map((part) => part.trim()))];
    const unknown = items.filter((item) => !(choices as readonly string[]).includes(item));
    if (unknown.length > 0 || items.length === 0) throw new InvalidArgumentError(`expected one or more of ${choices.join(', ')}, comma-separated`);
    return items as T[];
  };

const positiveInteger = (what: string) => (value: string) => {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new InvalidArgumentError(`${what} must be a positive whole number`);
  return parsed;
};
const logList = (value: string) => {
  const logs = value.split(',').map((part) => part.trim());
  if (logs.some((log) => log !== 'file' && log !== 'redis') || new Set(logs).size !== logs.length) throw new InvalidArgumentError('expected logs such as file,redis');
  return logs as Array<'file' | 'redis'>;
};

const verifySample = (value: string) => {
  const sample = parseGzipVerifySample(value);
  if (sample === undefined) throw new InvalidArgumentError('expected a share such as 1% or a number of clients');
  return sample;
};

const program = new Command('pnpm bench')
  .description('Reproduce the polling-versus-push study on this machine: a publisher, N clients, latency on the client, server CPU and memory.')
  .addOption(new Option('--scenario <name>', 'study: the polling-versus-push study against the publisher; upstream: the streaming-proxy study (clients polling a JSON API through Varnish against clients on the publisher\'s /patches)').choices(['study', 'upstream']).default('study'))
  .option('--change-interval <seconds>', 'upstream scenario: seconds between two changes of the upstream list', positive('change interval'), 20)
  .option('--upstream-poll <seconds>', 'upstream scenario: how often the pollers and the publisher ask the upstream', positive('upstream poll'), 5)
  .option('--upstream-changes <n>', 'upstream scenario: car parks of 13 that change at each change', positive('upstream changes'), 1)
  .addOption(
    new Option('--mode <list>', `what the clients do: ${benchModes.join(', ')}, a list such as poll,sse, or all`)
      .argParser((value: string) => (value === 'all' ? [...benchModes] : choiceList(benchModes)(value)))
      .default(['poll'], 'poll'),
  )
  .option('--clients <N|list>', 'clients, or a sweep such as 100,1000,2000,4000,8000', clientList, [1000])
  .option('--duration <seconds>', 'measured time after the ramp', positive('duration'), 30)
  .option('--ramp <seconds>', 'clients start at staggered times over this period', positive('ramp'), 10)
  .option('--interval <seconds>', 'update interval of the stream', positive('interval'), 5)
  .option('--payload <bytes>', 'element size in bytes of Turtle (the study: 5200)', positive('payload'), 5_400)
  .option('--poll-interval <ms>', 'fixed polling: pause after each response (default: 500, or 0.6 × the interval when shorter)', positive('poll interval'))
  .addOption(
    new Option('--poll-strategy <list>', 'fixed (the study), smart (the client library\'s schedule) or smart-hold (asking before each element is due, held until it comes); a list such as fixed,smart runs polling once per strategy')
      .argParser(choiceList(pollStrategyNames))
      .default(['fixed'], 'fixed'),
  )
  .addOption(new Option('--sse-encoding <name>', 'what SSE clients accept: identity (the study) or gzip (as browsers)').choices(['identity', 'gzip']).default('identity'))
  .option('--gzip-verify-sample <N%|N>', 'with --sse-encoding gzip: clients that inflate their whole stream and check what the others read without inflating (a share such as 1%, or a number)', verifySample, DEFAULT_GZIP_VERIFY_SAMPLE)
  .addOption(new Option('--websocket-client <name>', 'WebSocket subscribers: lean (RFC 6455 over a bare socket) or ws (the ws library\'s client, about a fifth more CPU per update)').choices(['lean', 'ws']).default('lean'))
  .addOption(new Option('--http-client <name>', 'pollers and long-pollers: lean (HTTP/1.1 over a connection of its own, parsed by hand) or undici (undici\'s request over a pool per worker; it costs the fleet more per answer)').choices(['lean', 'undici']).default('lean'))
  .addOption(new Option('--proxy <name>', 'cache in front of the publisher for polling (from the Debian package)').choices(['none', 'nginx', 'varnish']).default('none'))
  .option('--server-workers <N>', 'publisher worker processes (the publisher\'s --workers) of each instance', positive('server workers'), 1)
  .option('--server-instances <N>', 'publisher instances, each on its own port from --port, the clients dealt over them round-robin (above 1: --log redis)', positiveInteger('server instances'), 1)
  .addOption(new Option('--log <kind>', 'where the publishers keep the stream\'s log: file (each its own, the default) or redis (one Redis/Valkey the instances share)').choices(['file', 'redis']).default('file'))
  .option('--redis-url <url>', 'with --log redis: the Redis or Valkey (≥ 7.2) to share; default: the bench starts a Valkey of its own (scripts/valkey.sh) on a free port, and stops it after each run')
  .addOption(new Option('--redis-appendfsync <policy>', 'the bench\'s own Valkey: when its append-only file goes to disk').choices([...appendfsyncPolicies]).default('everysec'))
  .option('--compare-log <list>', 'run everything once per log, side by side: file,redis (file: one instance; redis: --server-instances), and print the latency Redis added', logList)
  .option('--clients-per-address <n>', 'client connections per 127.0.0.x source address at most', positiveInteger('clients per address'), DEFAULT_CLIENTS_PER_SOURCE_ADDRESS)
  .option('--source-addresses <n>', `source addresses the clients may connect from: 127.0.0.1 to 127.0.0.N (at most ${MAX_SOURCE_ADDRESSES})`, positiveInteger('source addresses'), DEFAULT_SOURCE_ADDRESSES)
  .option('--client-processes <N>', 'worker processes holding the clients', positive('client processes'), 2)
  .option('--target <url>', 'measure an already running publisher stream instead of starting one')
  .addOption(
    new Option('--peer <name>', 'SSE: after each SSE run, run the same fleet against a peer fed the same elements at the same interval — nchan: nginx with the nchan module (1 worker; Debian packages nginx and libnginx-mod-nchan) — and report the publisher beside it').choices(['nchan']),
  )
  .option('--cpu-prof <dir>', 'the publisher writes a V8 CPU profile (.cpuprofile) of each run into this directory when it stops, and each client worker one into its clients/ subdirectory')
  .option('--out <dir>', 'where to write summary.json and latencies.csv', `bench-results/${new Date().toISOString().replace(/[:.]/g, '-')}`)
  .option('--seed <n>', 'seed of the demo stream', positive('seed'), 1)
  .option('--port <n>', 'port of the publisher started for the run (the proxy takes the next one)', positive('port'), 18_900)
  .option('--throughput-duration <seconds>', 'raw-throughput phase with autocannon (0 skips it)', (value) => Number(value), 30)
  .option('--throughput-connections <n>', 'connections of the throughput phase (the study\'s wrk: 400)', positive('connections'), 400)
  .option('--throughput-threads <n>', 'autocannon threads of the throughput phase (above 1: its worker threads share the connections)', positive('threads'), 1)
  .option('--latency-target <ms>', 'p99 an SSE run must meet (with no missed update) to count for the MAL cut-off', positive('latency target'), 1000);

program.parse(process.argv.filter((arg) => arg !== '--'));
const flags = program.opts<{
  scenario: 'study' | 'upstream'; changeInterval: number; upstreamPoll: number; upstreamChanges: number;
  mode: BenchMode[]; clients: number[]; duration: number; ramp: number; interval: number; payload: number;
  pollInterval: number | undefined; pollStrategy: PollStrategyName[]; sseEncoding: 'identity' | 'gzip'; gzipVerifySample: GzipVerifySample; websocketClient: 'lean' | 'ws'; httpClient: 'lean' | 'undici'; proxy: 'none' | 'nginx' | 'varnish'; serverWorkers: number;
  serverInstances: number; log: 'file' | 'redis'; redisUrl?: string; redisAppendfsync: Appendfsync; compareLog?: Array<'file' | 'redis'>; clientsPerAddress: number; sourceAddresses: number;
  clientProcesses: number; target?: string; peer?: 'nchan'; cpuProf?: string; out: string; seed: number; port: number;
  throughputDuration: number; throughputConnections: number; throughputThreads: number; latencyTarget: number;
}>();
if (flags.scenario === 'upstream') {
  const results = await runUpstreamScenario(
    {
      clientCounts: flags.clients,
      durationSeconds: flags.duration,
      rampSeconds: flags.ramp,
      changeSeconds: flags.changeInterval,
      pollSeconds: flags.upstreamPoll,
      changes: flags.upstreamChanges,
      encoding: flags.sseEncoding,
      clientProcesses: flags.clientProcesses,
      port: flags.port,
      outDir: flags.out,
    },
    (line) => process.stdout.write(`${line}\n`),
  );
  console.log(`\n${upstreamTable(results)}\n\n${flags.out}/upstream.json\n${flags.out}/upstream.md`);
  process.exit(0);
}
/** Refuses a combination of flags that cannot run, saying why (exit status 2, as for a bad flag). */
const refuse = (message: string): never => {
  console.error(`pnpm bench: ${message}`);
  process.exit(2);
};
const logs = flags.compareLog ?? [flags.log];
if (flags.serverInstances > 1 && !logs.includes('redis')) refuse('several --server-instances serve one stream only through a shared log: add --log redis (or --compare-log file,redis)');
if (flags.serverInstances > 1 && flags.proxy !== 'none') refuse('--proxy fronts one publisher: leave it out with --server-instances above 1');
if (flags.redisUrl !== undefined && !logs.includes('redis')) refuse('--redis-url is the log of --log redis: add it');
if (flags.redisUrl !== undefined && !/^redis:\/\/\S+$/.test(flags.redisUrl)) refuse(`--redis-url must be redis://[[user]:password@]host[:port], not ${flags.redisUrl}`);
if (flags.peer !== undefined) {
  if (!flags.mode.includes('sse')) refuse('--peer compares SSE runs: add sse to --mode');
  if (flags.sseEncoding !== 'identity') refuse('--peer compares identity SSE: leave out --sse-encoding gzip');
  if (flags.target !== undefined) refuse('--peer is fed by the publisher the bench starts: leave out --target');
  if (flags.serverInstances > 1 || flags.serverWorkers > 1 || flags.compareLog !== undefined || flags.log !== 'file') refuse('--peer compares one publisher process with one nginx worker: leave out --server-instances, --server-workers, --log and --compare-log');
  // Not a skip: the comparison was asked for and cannot be made here.
  const missing = nchanMissing();
  if (missing !== undefined) {
    console.error(`pnpm bench: ${missing}`);
    process.exit(1);
  }
}
if (flags.sourceAddresses > MAX_SOURCE_ADDRESSES) refuse(`--source-addresses is at most ${MAX_SOURCE_ADDRESSES} (127.0.0.1 to 127.0.0.${MAX_SOURCE_ADDRESSES})`);
/** One process may hold 20 000 open files: a publisher worker holds no more connections. */
const MAX_CONNECTIONS_PER_PUBLISHER = 19_000;
// The clients are dealt over the instances; the fewest instances of the compared logs bound the run.
const fewestInstances = logs.includes('file') ? 1 : flags.serverInstances;
const tooMany = flags.clients.filter((count) => count > MAX_CONNECTIONS_PER_PUBLISHER * flags.serverWorkers * fewestInstances);
// Polling behind a proxy is the one case where the publisher does not hold a connection per client.
if (tooMany.length > 0 && flags.target === undefined && !(flags.mode.every((mode) => mode === 'poll') && flags.proxy !== 'none')) {
  console.error(
    `pnpm bench: ${tooMany.join(', ')} clients need more than ${MAX_CONNECTIONS_PER_PUBLISHER} connections per publisher process ` +
      `(at most 20 000 open files per process): use --server-workers ${Math.ceil(Math.max(...tooMany) / MAX_CONNECTIONS_PER_PUBLISHER)} or more`,
  );
  process.exit(2);
}
const options: BenchOptions = {
  modes: flags.mode,
  clientCounts: flags.clients,
  durationSeconds: flags.duration,
  rampSeconds: flags.ramp,
  intervalSeconds: flags.interval,
  facilities: facilitiesForPayload(flags.payload),
  pollIntervalMs: flags.pollInterval ?? defaultPollIntervalMs(flags.interval),
  pollStrategy: flags.pollStrategy[0] as PollStrategyName,
  sseEncoding: flags.sseEncoding,
  gzipVerifySample: flags.gzipVerifySample,
  websocketClient: flags.websocketClient,
  httpClient: flags.httpClient,
  proxy: flags.proxy,
  clientProcesses: flags.clientProcesses,
  serverWorkers: flags.serverWorkers,
  serverInstances: flags.serverInstances,
  log: flags.log,
  redisUrl: flags.redisUrl,
  redisAppendfsync: flags.redisAppendfsync,
  clientsPerSourceAddress: flags.clientsPerAddress,
  sourceAddresses: flags.sourceAddresses,
  target: flags.target,
  ...(flags.cpuProf === undefined ? {} : { publisherCpuProfDir: resolve(flags.cpuProf), clientCpuProfDir: join(resolve(flags.cpuProf), 'clients') }),
  outDir: flags.out,
  seed: flags.seed,
  port: flags.port,
};

const runs: RunSummary[] = [];
/** Each compared log runs everything: a file log on one instance, a Redis log on `--server-instances`. */
const legs = logs.map((log): BenchOptions => ({ ...options, log, serverInstances: log === 'file' && flags.compareLog !== undefined ? 1 : options.serverInstances }));
/** Polling runs once per strategy asked for (the goals compare them); every other mode once. */
const variants = (leg: BenchOptions, mode: BenchMode): BenchOptions[] => (mode === 'poll' ? flags.pollStrategy.map((pollStrategy) => ({ ...leg, pollStrategy })) : [leg]);
/** SSE runs once against the publisher and, with `--peer`, once more against the peer, back to back. */
const servers = (leg: BenchOptions, mode: BenchMode): BenchOptions[] => (mode === 'sse' && flags.peer !== undefined ? [leg, { ...leg, peer: flags.peer }] : [leg]);
for (const base of legs) for (const mode of options.modes) for (const variant of variants(base, mode)) for (const clients of options.clientCounts) for (const leg of servers(variant, mode)) {
  const bar = new SingleBar({
    format: `${(mode === 'poll' && flags.pollStrategy.length > 1 ? `poll (${leg.pollStrategy})` : mode).padEnd(9)} ${String(clients).padStart(6)} clients${leg.log === 'redis' ? ` on ${leg.serverInstances} × redis` : ''}${leg.peer === undefined ? '' : ` on ${leg.peer}`} [{bar}] {elapsed}/{total_s} s · connected {connected} · updates {updates}`,
    hideCursor: true,
    noTTYOutput: true,
    notTTYSchedule: 5_000,
  });
  bar.start(options.rampSeconds + options.durationSeconds, 0, { connected: 0, updates: 0, elapsed: 0, total_s: options.rampSeconds + options.durationSeconds });
  const summary = await runOne(leg, mode, clients, (state) =>
    bar.update(Math.floor(state.elapsedSeconds), { connected: state.connected, updates: state.updates, elapsed: Math.floor(state.elapsedSeconds) }),
  ).catch((error: unknown) => {
    bar.stop();
    // Not enough ports: what is free, what the run needs and what helps, rather than a half-connected fleet.
    if (error instanceof SourcePortsExhaustedError) refuse(error.message);
    throw error;
  });
  bar.stop();
  runs.push(summary);
}
/** The study's wrk run: the publisher alone, and behind the proxy when there is one. */
async function throughputPhase(): Promise<{ publisher: ThroughputResult; proxy?: ThroughputResult } | undefined> {
  if (!(flags.throughputDuration > 0)) return undefined;
  process.stdout.write(`throughput: autocannon ${flags.throughputConnections} connections, ${flags.throughputDuration} s …\n`);
  const publisher = options.target === undefined ? await startPublisher(options, 1000) : undefined;
  const direct = options.target ?? streamIri(`http://127.0.0.1:${options.port}`, 'parking');
  try {
    const alone = await measureThroughput(streamResources(direct).latest, flags.throughputConnections, flags.throughputDuration, flags.throughputThreads);
    if (options.proxy === 'none') return { publisher: alone };
    const dir = `${options.outDir}/${options.proxy}-throughput`;
    await startProxy(options.proxy, new URL(direct).host, options.port + 1, dir);
    try {
      const proxied = direct.replace(`:${new URL(direct).port}`, `:${options.port + 1}`);
      return {
        publisher: alone,
        proxy: await measureThroughput(streamResources(proxied).latest, flags.throughputConnections, flags.throughputDuration, flags.throughputThreads),
      };
    } finally {
      await stopProxy(options.proxy, dir);
    }
  } finally {
    if (publisher) await publisher.stop();
  }
}

const throughput = await throughputPhase();
const capacity = throughput?.proxy?.requestsPerSecond ?? throughput?.publisher.requestsPerSecond;
const sseThatMet = runs.filter((run) => run.mode === 'sse' && run.peer === undefined && run.missedUpdates === 0 && run.latencyMs.p99 <= flags.latencyTarget);
const mal = capacity === undefined ? undefined : analyzeMal(capacity, sseThatMet.length > 0 ? Math.max(...sseThatMet.map((run) => run.clients)) : undefined);
/** The largest run of a mode (SSE: of an encoding) that measured its CPU per update. */
const costOf = (mode: 'sse' | 'long-poll' | 'websocket', sseEncoding?: 'identity' | 'gzip') =>
  runs
    .filter((run) => run.mode === mode && run.sseEncoding === sseEncoding && run.peer === undefined && run.serverCpuMicrosPerUpdate !== null)
    .sort((a, b) => b.clients - a.clients)[0]?.serverCpuMicrosPerUpdate ?? null;
const plan = capacityPlan({
  cpuMicrosPerUpdate: { sse: costOf('sse', 'identity'), 'sse-gzip': costOf('sse', 'gzip'), 'long-poll': costOf('long-poll'), websocket: costOf('websocket') },
  pollRequestsPerSecond: throughput?.publisher.requestsPerSecond ?? null,
  bytes: runs.find((run) => run.elementBytes !== null)?.elementBytes ?? null,
  ran: [...new Set(runs.flatMap((run): PushTransport[] => (run.mode === 'poll' || run.peer !== undefined ? [] : [run.mode === 'sse' && run.sseEncoding === 'gzip' ? 'sse-gzip' : run.mode])))],
});
const command = `pnpm bench ${process.argv.slice(2).filter((arg) => arg !== '--').join(' ')}`.trim();
const written = await writeResults(options.outDir, command, runs, plan, throughput, mal);
console.log(`\n${resultTable(runs)}`);
if (throughput) {
  const line = (name: string, result: ThroughputResult) =>
    `${name}: ${result.requestsPerSecond} req/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, ${result.timeouts} timeouts, ` +
    `load generator ${result.loadGeneratorCpuMilli} mCPU over ${result.loadGeneratorThreads} thread(s)` +
    (result.loadGeneratorBound ? ' (the load generator was the bottleneck: this is its limit)' : '');
  console.log(`\n${line('publisher alone', throughput.publisher)}`);
  if (throughput.proxy) console.log(`${line(`behind ${options.proxy}`, throughput.proxy)} (× ${(throughput.proxy.requestsPerSecond / throughput.publisher.requestsPerSecond).toFixed(2)})`);
}
if (mal) {
  console.log(`\nMAL (formula 1, ${capacity} req/s): ${mal.table.map((row) => `${row.malSeconds} s → ${row.maxUsers} users`).join(', ')}`);
  console.log(mal.advice);
}
console.log(`\n${capacityTable(plan)}`);
console.log(`\n${memoryTable(connectionMemoryRows(runs))}`);
console.log(`\n${studyTable(runs)}`);
const instances = instanceTable(runs);
if (instances !== '') console.log(`\n${instances}`);
const comparison = logComparison(runs);
if (comparison.length > 0) console.log(`\n${logComparisonTable(comparison)}`);
const peers = peerComparison(runs);
if (peers.length > 0) console.log(`\n${peerComparisonTable(peers)}`);
const goals = goalRows(runs);
if (goals.length > 0) console.log(`\n${goalTable(goals)}`);
console.log(`\n${Object.values(written).join('\n')}`);
