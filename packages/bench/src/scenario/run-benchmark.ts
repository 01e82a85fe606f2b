import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LatencyRecorder } from '@rdf-stream/client';
import { countUpdates } from '../analyze/missed-updates.js';
import { ElementMonitor } from '../collect/element-monitor.js';
import { ProcessSampler, type ResourceSummary } from '../collect/process-sampler.js';
import type { BenchMode, WorkerJob, WorkerProgress, WorkerReport } from '../fleet/worker-protocol.js';
import { type BenchOptions, sourceAddresses } from './bench-options.js';
import { processTree, startProxy, startPublisher, stopProcess, stopProxy } from './services.js';


export interface RunSummary {
  readonly mode: BenchMode;
  readonly clients: number;
  readonly connected: number;
  readonly durationSeconds: number;
  readonly updatesPublished: number;
  readonly updatesExpected: number;
  readonly updatesReceived: number;
  readonly missedUpdates: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly reconnects: number;
  readonly requests: number;
  readonly notModified: number;
  readonly latencyMs: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number; readonly mean: number };
  readonly serverCpuMilli: ResourceSummary['cpuMilli'] | null;
  readonly serverRssMiB: ResourceSummary['rssMiB'] | null;
  readonly proxy: BenchOptions['proxy'];
  readonly pollStrategy?: BenchOptions['pollStrategy'];
  /** Connected clients and updates received so far, once per second from the start of the ramp. */
  readonly timeline: Array<{ readonly seconds: number; readonly connected: number; readonly updates: number }>;
  /** The 10 % sample of raw latencies: [seq, latencyMs]. */
  readonly samples: Array<[number, number]>;
}

export type ProgressListener = (state: { elapsedSeconds: number; totalSeconds: number; connected: number; updates: number }) => void;

/** Runs one measured configuration: publisher (and proxy), fleet, sampling, accounting. */
export async function runOne(options: BenchOptions, mode: BenchMode, clients: number, onProgress: ProgressListener): Promise<RunSummary> {
  const publisher = options.target === undefined ? await startPublisher(options, clients) : undefined;
  const directUrl = options.target ?? `http://127.0.0.1:${options.port}/streams/parking`;
  let proxyPid: number | undefined;
  const proxyDir = `${options.outDir}/${options.proxy}`;
  let clientUrl = directUrl;
  try {
    if (options.proxy !== 'none' && mode !== 'sse') {
      proxyPid = await startProxy(options.proxy, new URL(directUrl).host, options.port + 1, proxyDir);
      clientUrl = directUrl.replace(`:${new URL(directUrl).port}`, `:${options.port + 1}`);
    }
    const pids = [...(publisher?.pid === undefined ? [] : await processTree(publisher.pid)), ...(proxyPid === undefined ? [] : [proxyPid])];
    const sampler = pids.length > 0 ? new ProcessSampler(pids) : undefined;
    const monitor = new ElementMonitor();
    await monitor.start(directUrl);
    sampler?.start();

    const processes = Math.max(1, Math.min(options.clientProcesses, clients));
    const addresses = sourceAddresses(clients);
    const workers = Array.from({ length: processes }, () =>
      fork(fileURLToPath(new URL('../fleet/client-worker.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
    const progress = new Map<ChildProcess, WorkerProgress>();
    const measureFromMs = Date.now() + options.rampSeconds * 1000;
    let first = 0;
    workers.forEach((worker, index) => {
      const count = Math.floor(clients / processes) + (index < clients % processes ? 1 : 0);
      const job: WorkerJob = {
        mode,
        streamUrl: clientUrl,
        clients: count,
        firstClient: first,
        totalClients: clients,
        rampMs: options.rampSeconds * 1000,
        pollIntervalMs: options.pollIntervalMs,
        pollStrategy: options.pollStrategy,
        localAddresses: addresses,
        sampleRate: 0.1,
        requestTimeoutMs: 10_000,
        measureFromMs,
      };
      first += count;
      worker.on('message', (message: WorkerProgress | WorkerReport) => {
        if (message.type === 'progress') progress.set(worker, message);
      });
      worker.send(job);
    });

    const totalSeconds = options.rampSeconds + options.durationSeconds;
    const startedAt = Date.now();
    const timeline: RunSummary['timeline'] = [];
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const elapsedSeconds = Math.min(totalSeconds, (Date.now() - startedAt) / 1000);
        const values = [...progress.values()];
        const state = {
          elapsedSeconds,
          totalSeconds,
          connected: values.reduce((sum, value) => sum + value.connected, 0),
          updates: values.reduce((sum, value) => sum + value.updates, 0),
        };
        onProgress(state);
        const second = Math.floor(elapsedSeconds);
        if (timeline.at(-1)?.seconds !== second) timeline.push({ seconds: second, connected: state.connected, updates: state.updates });
        if (elapsedSeconds >= totalSeconds) {
          clearInterval(timer);
          resolve();
        }
      }, 500);
    });
    const connected = [...progress.values()].reduce((sum, value) => sum + value.connected, 0);
    const endedAt = Date.now();
    const reports = await Promise.all(
      workers.map(async (worker) => {
        const report = new Promise<WorkerReport>((resolve) => {
          worker.on('message', (message: WorkerProgress | WorkerReport) => {
            if (message.type === 'report') resolve(message);
          });
        });
        worker.send('stop');
        return report;
      }),
    );
    const resources = sampler?.stop();
    monitor.stop();

    const recorder = new LatencyRecorder();
    for (const report of reports) recorder.merge(report.histogram);
    const latency = recorder.summary();
    const sum = (key: 'errors' | 'timeouts' | 'reconnects' | 'requests' | 'notModified') =>
      reports.reduce((total, report) => total + report[key], 0);
    const accounting = countUpdates(
      monitor.published,
      reports.flatMap((report) => report.clients),
      measureFromMs,
      endedAt,
      Math.max(2_000, options.pollIntervalMs * 2),
    );
    const inWindow = [...monitor.published.values()].filter((time) => time >= measureFromMs && time <= endedAt).length;
    const round = (value: number) => Math.round(value * 10) / 10;
    return {
      mode,
      clients,
      connected,
      durationSeconds: options.durationSeconds,
      updatesPublished: inWindow,
      updatesExpected: accounting.expected,
      updatesReceived: accounting.received,
      missedUpdates: accounting.missed,
      errors: sum('errors'),
      timeouts: sum('timeouts'),
      reconnects: sum('reconnects'),
      requests: sum('requests'),
      notModified: sum('notModified'),
      latencyMs: { p50: round(latency.p50), p90: round(latency.p90), p99: round(latency.p99), max: round(latency.max), mean: round(latency.mean) },
      serverCpuMilli: resources?.cpuMilli ?? null,
      serverRssMiB: resources?.rssMiB ?? null,
      proxy: mode === 'sse' ? 'none' : options.proxy,
      ...(mode === 'poll' ? { pollStrategy: options.pollStrategy } : {}),
      timeline,
      samples: reports.flatMap((report) => report.samples),
    };
  } finally {
    if (proxyPid !== undefined && options.proxy !== 'none') await stopProxy(options.proxy, proxyDir);
    if (publisher) await stopProcess(publisher);
  }
}
