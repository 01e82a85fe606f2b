import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { streamIri, streamResources } from '@rdf-stream/protocol';
import { sumCounts } from '../analyze/sum-counts.js';
import { ProcessSampler, type ResourceSummary } from '../collect/process-sampler.js';
import { nextMessage } from '../process/child-message.js';
import { PublisherProcess } from '../process/publisher-process.js';
import type { UpstreamClientJob, UpstreamClientReport } from '../fleet/upstream-client-worker.js';
import { processTree, startProxy, stopProcess, stopProxy } from './services.js';

/**
 * The streaming-proxy study (streamdata.io's "Server-Sent Events vs polling"), reproduced: a
 * JSON API whose list changes every 20 s, and, in the same run, for each client count,
 *
 * - `varnish`: clients polling the API every 5 s through Varnish (the study's standard
 *   architecture, without its TLS-offloading HAProxy);
 * - `patches`: clients subscribed to the publisher's `/patches`, the publisher polling the API
 *   once every 5 s (a web-API source, `identity: state`): the study's streaming proxy.
 *
 * Each arm runs its own clients for `rampSeconds + durationSeconds`; only the last
 * `durationSeconds` are measured.
 */
export interface UpstreamOptions {
  readonly clientCounts: readonly number[];
  readonly durationSeconds: number;
  readonly rampSeconds: number;
  readonly changeSeconds: number;
  readonly pollSeconds: number;
  /** Facilities of 13 that change at each change. */
  readonly changes: number;
  readonly encoding: 'identity' | 'gzip';
  readonly clientProcesses: number;
  readonly port: number;
  readonly outDir: string;
}

export interface ArmResult {
  readonly arm: 'varnish' | 'patches';
  readonly clients: number;
  readonly connected: number;
  readonly durationSeconds: number;
  readonly upstreamRequestsPerSecond: number;
  readonly upstreamCpuMilli: ResourceSummary['cpuMilli'];
  /** Varnish (arm varnish) or the publisher (arm patches). */
  readonly middleCpuMilli: ResourceSummary['cpuMilli'];
  readonly middleRssMiB: ResourceSummary['rssMiB'];
  readonly clientRequestsPerSecond: number;
  /** From the change at the upstream to the client (ms). */
  readonly latencyMs: Percentiles;
  readonly changesSeen: number;
  /** Request to response of the polls (ms); null for the event streams. */
  readonly responseMs: Percentiles | null;
  /**
   * Patches: from the element's generation (the publisher's poll that found the change) to the
   * client (ms): the push alone, without the wait for the publisher's next poll; null for polls.
   */
  readonly fanOutMs: Percentiles | null;
  readonly bytesPerClientPerMinute: number;
  readonly errors: number;
  readonly errorCodes: Record<string, number>;
}

interface Percentiles {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
}

const repositoryRoot = fileURLToPath(new URL('../../../../', import.meta.url));

function percentiles(values: number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: sorted.at(-1) ?? Number.NaN };
}

async function startUpstream(options: UpstreamOptions, port: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./upstream-api.ts', import.meta.url)), '--port', String(port), '--change-ms', String(options.changeSeconds * 1000), '--changes', String(options.changes)],
    { cwd: repositoryRoot, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (text: string) => text.includes('listening') && resolve());
    child.once('exit', (code) => reject(new Error(`the upstream API exited with ${code}`)));
  });
  return child;
}

async function upstreamRequests(port: number): Promise<number> {
  return ((await (await fetch(`http://127.0.0.1:${port}/stats`)).json()) as { requests: number }).requests;
}

/** The publisher CLI with one web-API stream (`identity: state`) polling the upstream. */
async function startStatePublisher(options: UpstreamOptions, port: number, upstreamUrl: string, clients: number): Promise<PublisherProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-upstream-'));
  const config = join(dir, 'publisher.json');
  writeFileSync(
    config,
    JSON.stringify({
      streams: [
        {
          id: 'parking',
          title: 'Car parks from an upstream JSON API',
          intervalSeconds: 'irregular',
          source: {
            kind: 'web-api',
            url: upstreamUrl,
            pollSeconds: options.pollSeconds,
            identity: 'state',
            mapping: {
              records: 'facilities',
              sensor: 'https://data.example.org/sensors/{id}',
              observedProperty: 'http://vocab.datex.org/terms#parkingNumberOfVacantSpaces',
              featureOfInterest: 'https://data.example.org/facilities/{id}',
              result: '{free}',
              resultTime: '{changedAt}',
              id: '{id}',
            },
          },
        },
      ],
    }),
  );
  const publisher = await PublisherProcess.start({
    port,
    flags: [
      '--config', config,
      '--log', 'memory',
      '--max-subscribers', String(clients + 100),
      '--max-event-loop-delay-ms', '0',
      '--max-event-loop-turn-ms', '0',
      '--log-level', 'info', '--log-format', 'json',
    ],
  }).finally(() => rmSync(dir, { recursive: true, force: true }));
  return publisher;
}

/** Forks the client processes, runs the job split among them, and merges their reports. */
async function runClients(options: UpstreamOptions, job: Omit<UpstreamClientJob, 'clients'>, clients: number): Promise<UpstreamClientReport> {
  const processes = Math.min(options.clientProcesses, clients);
  const workers = Array.from({ length: processes }, () =>
    fork(fileURLToPath(new URL('../fleet/upstream-client-worker.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
  await Promise.all(workers.map((worker) => nextMessage(worker, 'loaded')));
  const reports = await Promise.all(
    workers.map((worker, index) => {
      const count = Math.floor(clients / processes) + (index < clients % processes ? 1 : 0);
      worker.send({ ...job, clients: count } satisfies UpstreamClientJob);
      return nextMessage<UpstreamClientReport>(worker, 'reported');
    }),
  );
  return {
    type: 'report',
    latenciesMs: reports.flatMap((report) => report.latenciesMs),
    responseMs: reports.flatMap((report) => report.responseMs),
    fanOutMs: reports.flatMap((report) => report.fanOutMs),
    errorCodes: sumCounts(reports.map((report) => report.errorCodes)),
    bytesRead: reports.reduce((sum, report) => sum + report.bytesRead, 0),
    requests: reports.reduce((sum, report) => sum + report.requests, 0),
    errors: reports.reduce((sum, report) => sum + report.errors, 0),
    connected: reports.reduce((sum, report) => sum + report.connected, 0),
  };
}

async function runArm(
  options: UpstreamOptions,
  arm: ArmResult['arm'],
  clients: number,
  upstream: { readonly pid: number; readonly port: number },
  middlePids: number[],
  url: string,
): Promise<ArmResult> {
  const rampMs = options.rampSeconds * 1000;
  const measureFromMs = Date.now() + rampMs + 2_000;
  const endMs = measureFromMs + options.durationSeconds * 1000;
  const upstreamSampler = new ProcessSampler([upstream.pid]);
  const middleSampler = new ProcessSampler(middlePids);
  const sampling = setTimeout(() => {
    upstreamSampler.start();
    middleSampler.start();
  }, measureFromMs - Date.now());
  let requestsAtStart = 0;
  const counting = setTimeout(() => void upstreamRequests(upstream.port).then((count) => (requestsAtStart = count)), measureFromMs - Date.now());
  const report = await runClients(
    options,
    { mode: arm === 'varnish' ? 'poll' : 'patches', url, rampMs, pollIntervalMs: options.pollSeconds * 1000, encoding: options.encoding, measureFromMs, endMs },
    clients,
  );
  clearTimeout(sampling);
  clearTimeout(counting);
  const requestsAtEnd = await upstreamRequests(upstream.port);
  const upstreamUse = await upstreamSampler.stop();
  const middleUse = await middleSampler.stop();
  const seconds = options.durationSeconds;
  return {
    arm,
    clients,
    connected: report.connected,
    durationSeconds: seconds,
    // The stats request itself is not counted: it is not one of the API's.
    upstreamRequestsPerSecond: Math.round(((requestsAtEnd - requestsAtStart) / seconds) * 100) / 100,
    upstreamCpuMilli: upstreamUse.cpuMilli,
    middleCpuMilli: middleUse.cpuMilli,
    middleRssMiB: middleUse.rssMiB,
    clientRequestsPerSecond: Math.round(report.requests / seconds),
    latencyMs: percentiles(report.latenciesMs),
    changesSeen: report.latenciesMs.length,
    responseMs: arm === 'varnish' ? percentiles(report.responseMs) : null,
    fanOutMs: arm === 'patches' ? percentiles(report.fanOutMs) : null,
    bytesPerClientPerMinute: Math.round(report.bytesRead / clients / (seconds / 60)),
    errors: report.errors,
    errorCodes: report.errorCodes,
  };
}

/** Runs both arms for every client count; writes `upstream.json` and `upstream.md` to `outDir`. */
export async function runUpstreamScenario(options: UpstreamOptions, log: (line: string) => void): Promise<ArmResult[]> {
  const upstreamPort = options.port + 2;
  const proxyPort = options.port + 1;
  const upstream = await startUpstream(options, upstreamPort);
  const results: ArmResult[] = [];
  try {
    for (const clients of options.clientCounts) {
      const proxyDir = mkdtempSync(join(tmpdir(), 'varnish-'));
      log(`upstream: ${clients} clients polling through Varnish every ${options.pollSeconds} s …`);
      const varnishPid = await startProxy('varnish', `127.0.0.1:${upstreamPort}`, proxyPort, proxyDir);
      try {
        results.push(await runArm(options, 'varnish', clients, { pid: upstream.pid!, port: upstreamPort }, await processTree(varnishPid), `http://127.0.0.1:${proxyPort}/parking`));
      } finally {
        await stopProxy('varnish', proxyDir);
        rmSync(proxyDir, { recursive: true, force: true });
      }
      log(`upstream: ${clients} clients on the publisher's /patches (it polls every ${options.pollSeconds} s) …`);
      const publisher = await startStatePublisher(options, options.port, `http://127.0.0.1:${upstreamPort}/parking`, clients);
      try {
        results.push(
          await runArm(options, 'patches', clients, { pid: upstream.pid!, port: upstreamPort }, [publisher.pid], streamResources(streamIri(`http://127.0.0.1:${options.port}`, 'parking')).patches),
        );
      } finally {
        await publisher.stop();
      }
    }
  } finally {
    await stopProcess(upstream);
  }
  mkdirSync(options.outDir, { recursive: true });
  writeFileSync(join(options.outDir, 'upstream.json'), `${JSON.stringify({ date: new Date().toISOString(), options, results }, null, 2)}\n`);
  writeFileSync(join(options.outDir, 'upstream.md'), `${upstreamTable(results)}\n`);
  return results;
}

/** The study's figures (streamdata.io, "Server-Sent Events vs polling", 2 minutes per run). */
const study: Record<number, { readonly standardCpu: string; readonly proxyCpu: string; readonly standardBytes: string; readonly proxyBytes: string }> = {
  1000: { standardCpu: '~10 %', proxyCpu: '~0', standardBytes: '173 MB', proxyBytes: '287 kB' },
  5000: { standardCpu: '~40 %', proxyCpu: '~0', standardBytes: '805 MB', proxyBytes: '264 kB' },
  10000: { standardCpu: '~80 % (peaks 100 %)', proxyCpu: '~0', standardBytes: '1.59 GB', proxyBytes: '307 kB' },
};

export function upstreamTable(results: readonly ArmResult[]): string {
  const rows = results.map((result) => {
    const figures = study[result.clients];
    const theirs = figures === undefined ? '–' : result.arm === 'varnish' ? `${figures.standardCpu}, ${figures.standardBytes}` : `${figures.proxyCpu}, ${figures.proxyBytes}`;
    const latency = `${result.latencyMs.p50} / ${result.latencyMs.p95} / ${result.latencyMs.max}`;
    return `| ${result.clients} | ${result.arm} | ${result.connected} | ${result.upstreamRequestsPerSecond} | ${result.upstreamCpuMilli.mean} | ${result.middleCpuMilli.mean} (max ${result.middleCpuMilli.max}) | ${result.clientRequestsPerSecond} | ${latency} (${result.changesSeen}) | ${result.responseMs === null ? '–' : `${result.responseMs.p50} / ${result.responseMs.p95}`} | ${result.fanOutMs === null ? '–' : `${result.fanOutMs.p50} / ${result.fanOutMs.p95} / ${result.fanOutMs.max}`} | ${result.bytesPerClientPerMinute} | ${result.errors} | ${theirs} |`;
  });
  return [
    '| clients | arm | connected | upstream req/s | upstream mCPU | Varnish / publisher mCPU | client req/s | change → client ms p50 / p95 / max (changes seen) | poll response ms p50 / p95 | publisher → client ms p50 / p95 / max | bytes per client per minute | errors | the study: backend CPU, backend traffic in 2 min |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
