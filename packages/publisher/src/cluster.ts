import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { PublisherConfig } from './config/config-schema.js';
import type { Observation } from './model/observation.js';
import { streamIri } from './model/stream-element.js';
import { createPublisher } from './publisher.js';
import type { ElementSource, SourceHealth } from './source/element-source.js';
import { ManualSource } from './source/manual-source.js';
import { createSource } from './sources.js';

const EPOCH_VARIABLE = 'RDF_STREAM_CLUSTER_EPOCH';

/** What the primary sends every worker for each element. */
interface ElementMessage {
  readonly type: 'element';
  readonly streamId: string;
  readonly seq: number;
  readonly generatedAtMs: number;
  readonly observations: readonly Observation[];
}

/** What the primary sends every worker about each stream's source, every second. */
interface HealthMessage {
  readonly type: 'source-health';
  readonly streamId: string;
  readonly health: SourceHealth;
}

type PrimaryMessage = ElementMessage | HealthMessage;

/** Milliseconds between two source-health messages from the primary to its workers. */
const HEALTH_RELAY_MS = 1_000;

/**
 * A worker's stand-in for a source the primary runs: elements arrive as messages, and its
 * kind and health are the primary's source's, so that every worker's /health and /metrics tell
 * the truth about it.
 */
class RelayedSource extends ManualSource {
  #health: SourceHealth = { state: 'ok', recordsRejected: 0 };

  override health(): SourceHealth {
    return this.#health;
  }

  relayed(health: SourceHealth): void {
    this.#health = health;
  }
}

const log = (level: 'info' | 'error', message: string, fields: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ level: level === 'info' ? 30 : 50, time: Date.now(), pid: process.pid, ...fields, msg: message })}\n`);

/**
 * `--workers N` (N > 1): the primary runs the source and numbers the elements; every worker
 * renders and serves them (the same bytes, the same sequence numbers and ETags: one shared log
 * epoch) on the shared port, and holds its own subscribers, so broadcasts use every core.
 * A worker that dies is replaced; its subscribers reconnect to the others and resume by id.
 */
export async function runPrimary(config: PublisherConfig): Promise<void> {
  const epoch = randomBytes(6).toString('base64url');
  cluster.setupPrimary({ serialization: 'advanced' });
  let stopping = false;
  const latest = new Map<string, ElementMessage>();
  const fork = () => cluster.fork({ [EPOCH_VARIABLE]: epoch });
  const workers = Array.from({ length: config.workers }, fork);
  await Promise.all(workers.map((worker) => once(worker, 'listening')));
  cluster.on('exit', (worker: Worker, code, signal) => {
    if (stopping) return;
    log('error', 'worker exited, starting another', { worker: worker.process.pid, code, signal });
    const replacement = fork();
    // It starts from the latest element (its log begins there).
    replacement.once('listening', () => latest.forEach((message) => replacement.send(message)));
  });

  const sources: ElementSource[] = config.streams.map((stream) => {
    const logger = {
      info: (fields: object, message: string) => log('info', message, { ...fields, stream: stream.id }),
      warn: (fields: object, message: string) => log('error', message, { ...fields, stream: stream.id }),
      error: (fields: object, message: string) => log('error', message, { ...fields, stream: stream.id }),
    };
    const source = createSource(stream, config, logger);
    let seq = 0;
    source.start((observations, generatedAt) => {
      const message: ElementMessage = { type: 'element', streamId: stream.id, seq: ++seq, generatedAtMs: generatedAt.getTime(), observations };
      latest.set(stream.id, message);
      for (const worker of Object.values(cluster.workers ?? {})) worker?.send(message);
    });
    return source;
  });
  const healthMessages = (): HealthMessage[] =>
    config.streams.map((stream, index) => ({ type: 'source-health', streamId: stream.id, health: (sources[index] as ElementSource).health() }));
  const relayHealth = setInterval(() => {
    const messages = healthMessages();
    for (const worker of Object.values(cluster.workers ?? {})) for (const message of messages) worker?.send(message);
  }, HEALTH_RELAY_MS);
  relayHealth.unref();
  cluster.on('listening', (worker) => healthMessages().forEach((message) => worker.send(message)));
  const iris = config.streams.map((stream) => streamIri(config.baseUrl, stream.id));
  log('info', `publishing ${config.streams.map((stream) => stream.id).join(', ')} at ${config.baseUrl}/streams with ${config.workers} workers`, {
    streams: iris,
  });

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    log('info', 'draining subscribers before exit', { signal });
    clearInterval(relayHealth);
    for (const source of sources) void source.stop();
    const running = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
    const exits = running.map((worker) => once(worker, 'exit'));
    for (const worker of running) worker.process.kill('SIGTERM');
    const timer = setTimeout(() => {
      log('error', 'stopped: drain overran shutdownTimeoutMs', { clean: false });
      process.exit(1);
    }, config.shutdownTimeoutMs + 1_000);
    void Promise.all(exits).then(() => {
      clearTimeout(timer);
      log('info', 'stopped', { clean: true });
      process.exit(0);
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

/** A cluster worker: the HTTP publisher, fed by the primary's elements. */
export async function runWorker(config: PublisherConfig): Promise<void> {
  // The primary runs the real sources; a worker's are fed its messages.
  const sources = new Map(
    config.streams.map((stream) => [
      stream.id,
      new RelayedSource(stream.intervalSeconds == null ? null : stream.intervalSeconds * 1000, stream.source.kind),
    ]),
  );
  const epoch = process.env[EPOCH_VARIABLE];
  const publisher = await createPublisher(config, { sources, ...(epoch ? { epoch } : {}) });
  await publisher.start();
  await publisher.listen();
  process.on('message', (message: PrimaryMessage) => {
    if (message?.type === 'source-health') {
      sources.get(message.streamId)?.relayed(message.health);
      return;
    }
    const hub = message?.type === 'element' ? publisher.hubs.get(message.streamId) : undefined;
    if (hub === undefined) return;
    hub.publish(message.observations, new Date(message.generatedAtMs), message.seq).catch((error: unknown) => {
      publisher.app.log.error({ err: error }, 'element from the primary refused');
    });
  });
  process.once('SIGTERM', () => {
    void publisher.shutdown().then((clean) => process.exit(clean ? 0 : 1));
  });
  // The primary's death leaves this worker without elements: leave with it.
  process.once('disconnect', () => {
    void publisher.shutdown().then(() => process.exit(0));
  });
}

export const isClusterWorker = () => cluster.isWorker;
