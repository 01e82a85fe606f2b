import cluster, { type Worker } from 'node:cluster';
import { once } from 'node:events';
import { pickFreePort } from './bind-free-port.js';
import { sendToWorker } from './cluster-send.js';
import type { PublisherConfig } from './config/config-schema.js';
import { withListeningPort } from './config/load-config.js';
import type { LogGap } from './log/follow-log.js';
import type { LatestElement } from './publish/latest/latest-element-cache.js';
import { relayLog } from './publish/replica-relay.js';
import { createPublisher, type Publisher } from './publisher.js';
import type { LoggedElement } from './render/render-element.js';
import type { SourceHealth } from './source/element-source.js';
import { ManualSource } from './source/manual-source.js';

/** What every worker must know of the streams before it builds its publisher. */
const STREAMS_VARIABLE = 'RDF_STREAM_CLUSTER_STREAMS';
/** The port the workers listen on, when the primary picked it (`--port 0`). */
const PORT_VARIABLE = 'RDF_STREAM_CLUSTER_PORT';

interface ClusterStream {
  readonly id: string;
  /** The writer's log epoch (a memory log's cannot be read from disk). */
  readonly epoch: string;
  /** The writer's source's interval: workers compute the same headers and descriptor. */
  readonly expectedIntervalMs: number | null;
  readonly kind: string;
}

/** An element the writer made durable. */
interface ElementMessage {
  readonly type: 'element';
  readonly streamId: string;
  readonly element: LoggedElement;
}

/**
 * Elements the writer made durable but can no longer send (retention removed them before they
 * were relayed): the replica goes on after them, and its own readers get the gap.
 */
interface GapMessage {
  readonly type: 'gap';
  readonly streamId: string;
  readonly gap: LogGap;
}

/** `/latest`'s representations of an element, compressed once by the writer. */
interface LatestMessage {
  readonly type: 'latest';
  readonly streamId: string;
  readonly latest: LatestElement;
}

/** What the primary sends every worker about each stream's source, every second. */
interface HealthMessage {
  readonly type: 'source-health';
  readonly streamId: string;
  readonly health: SourceHealth;
}

type PrimaryMessage = ElementMessage | GapMessage | LatestMessage | HealthMessage;

/** Milliseconds between two source-health messages from the primary to its workers. */
const HEALTH_RELAY_MS = 1_000;

/**
 * A worker's stand-in for a source the primary runs: its kind, interval and health are the
 * primary's source's, so that every worker's headers, descriptor, /health and /metrics tell the
 * truth about it.
 */
class RelayedSource extends ManualSource {
  // Until the primary's first report: its sources start after the workers listen.
  #health: SourceHealth = { state: 'starting', recordsRejected: 0 };

  override health(): SourceHealth {
    return this.#health;
  }

  relayed(health: SourceHealth): void {
    this.#health = health;
  }
}

const workers = () => Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);

/**
 * `--workers N` (N > 1): the primary is the streams' one writer — it runs the sources, numbers,
 * renders and appends every element to the log, and compresses `/latest` once — and serves no
 * HTTP. Workers are replicas of the log: they read the same data directory and receive each
 * durable element's rendered bytes and `/latest`'s compressed ones, and serve every interface on
 * the shared port, each holding its own subscribers. A worker that dies is replaced; its
 * subscribers reconnect to the others and resume by id.
 */
export async function runPrimary(configured: PublisherConfig): Promise<void> {
  const config = configured.port === 0 ? withListeningPort(configured, await pickFreePort(configured.host, configured.listenBacklog)) : configured;
  const writer = await createPublisher(config);
  const primary: PrimaryState = { config, writer, stopping: false };
  const latest = relayWrites(writer);
  const started = forkWorkers(primary, latest);
  await Promise.all(started.map((worker) => once(worker, 'listening')));
  await writer.start();

  const relayHealth = setInterval(() => healthMessages(writer).forEach(broadcast), HEALTH_RELAY_MS);
  relayHealth.unref();
  const stop = (signal: NodeJS.Signals) => {
    clearInterval(relayHealth);
    drainAndExit(primary, signal);
  };
  // Before announcing the start: a supervisor may signal as soon as it reads that line.
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  writer.app.log.info(
    { streams: [...writer.hubs.values()].map((hub) => hub.definition.iri), workers: config.workers, dataDir: config.log === 'file' ? config.dataDir : null },
    `publishing ${[...writer.hubs.keys()].join(', ')} at ${config.baseUrl}/streams with ${config.workers} workers`,
  );
}

/** What the primary's handlers share. */
interface PrimaryState {
  readonly config: PublisherConfig;
  readonly writer: Publisher;
  /** Set by the first stop signal: workers that exit then are not replaced. */
  stopping: boolean;
}

const broadcast = (message: PrimaryMessage) => {
  for (const worker of workers()) sendToWorker(worker, message);
};

const healthMessages = (writer: Publisher): HealthMessage[] =>
  [...writer.hubs.values()].map((hub) => ({ type: 'source-health', streamId: hub.definition.id, health: hub.source.health() }));

/**
 * Sends every worker each element the writer makes durable, in order (or the gap of those it no
 * longer has), and each `/latest` the writer compresses. Returns the newest `/latest` message of each stream, for the workers that
 * start later.
 */
function relayWrites(writer: Publisher): ReadonlyMap<string, LatestMessage> {
  const latest = new Map<string, LatestMessage>();
  for (const hub of writer.hubs.values()) {
    const streamId = hub.definition.id;
    relayLog(
      hub.log,
      (step) => broadcast(step.kind === 'gap' ? { type: 'gap', streamId, gap: step } : { type: 'element', streamId, element: step.element }),
      (error) => writer.app.log.error({ err: error, stream: streamId }, 'relaying an element failed'),
    );
    hub.latestCache.onServed((served) => {
      const message: LatestMessage = { type: 'latest', streamId, latest: served };
      latest.set(streamId, message);
      broadcast(message);
    });
  }
  return latest;
}

/**
 * Forks `config.workers` workers and returns them; replaces a worker that exits before the stop,
 * and brings every worker that starts (or restarts) up to date.
 */
function forkWorkers(primary: PrimaryState, latest: ReadonlyMap<string, LatestMessage>): Worker[] {
  const { config, writer } = primary;
  const streams: ClusterStream[] = [...writer.hubs.values()].map((hub) => ({
    id: hub.definition.id,
    epoch: hub.log.epoch,
    expectedIntervalMs: hub.definition.expectedIntervalMs,
    kind: hub.source.kind,
  }));
  cluster.setupPrimary({ serialization: 'advanced' });
  const fork = () => cluster.fork({ [STREAMS_VARIABLE]: JSON.stringify(streams), [PORT_VARIABLE]: String(config.port) });
  const started = Array.from({ length: config.workers }, fork);
  cluster.on('exit', (worker: Worker, code, signal) => {
    if (primary.stopping) return;
    writer.app.log.error({ worker: worker.process.pid, code, signal }, 'worker exited, starting another');
    fork();
  });
  // A worker that starts (or restarts) gets the latest element and the sources' health at once;
  // the history it reads from the log.
  cluster.on('listening', (worker) => {
    latest.forEach((message) => sendToWorker(worker, message));
    healthMessages(writer).forEach((message) => sendToWorker(worker, message));
  });
  return started;
}

/**
 * The first stop signal: the workers drain their subscribers within `shutdownTimeoutMs`, then the
 * writer closes its logs and the process exits. A second signal exits at once.
 */
function drainAndExit(primary: PrimaryState, signal: NodeJS.Signals): void {
  const { config, writer } = primary;
  if (primary.stopping) process.exit(1);
  primary.stopping = true;
  writer.app.log.info({ signal }, 'draining subscribers before exit');
  const running = workers();
  const exits = running.map((worker) => once(worker, 'exit'));
  for (const worker of running) worker.process.kill('SIGTERM');
  const timer = setTimeout(() => {
    writer.app.log.error({ clean: false }, 'stopped: workers overran shutdownTimeoutMs');
    process.exit(1);
  }, config.shutdownTimeoutMs + 1_000);
  void Promise.all(exits)
    .then(() => {
      clearTimeout(timer);
      return writer.shutdown();
    })
    .then((clean) => {
      writer.app.log.info({ clean }, clean ? 'stopped' : 'stopped: the writer overran shutdownTimeoutMs');
      process.exit(clean ? 0 : 1);
    });
}

/** A cluster worker: the HTTP publisher on a replica of each stream's log. */
export async function runWorker(configured: PublisherConfig): Promise<void> {
  const pickedPort = process.env[PORT_VARIABLE];
  const config = pickedPort === undefined ? configured : withListeningPort(configured, Number(pickedPort));
  const streams = JSON.parse(process.env[STREAMS_VARIABLE] ?? '[]') as ClusterStream[];
  const sources = new Map(streams.map((stream) => [stream.id, new RelayedSource(stream.expectedIntervalMs, stream.kind)]));
  const publisher: Publisher = await createPublisher(config, {
    sources,
    role: 'replica',
    epochs: new Map(streams.map((stream) => [stream.id, stream.epoch])),
  });
  await publisher.start();
  await publisher.listen();
  process.on('message', (message: PrimaryMessage) => {
    const hub = publisher.hubs.get(message?.streamId);
    if (hub === undefined) return;
    if (message.type === 'source-health') sources.get(message.streamId)?.relayed(message.health);
    else if (message.type === 'latest') hub.replicateLatest(revivedLatest(message.latest));
    else if (message.type === 'gap') {
      // The replica's log takes the next element after the hole; its readers get the gap from it.
      publisher.app.log.warn({ stream: message.streamId, gap: message.gap }, 'elements the writer no longer had were not relayed');
    }
    else if (message.type === 'element') {
      hub.replicate(revivedElement(message.element)).catch((error: unknown) => {
        publisher.app.log.error({ err: error }, 'element from the writer refused');
      });
    }
  });
  process.once('SIGTERM', () => {
    void publisher.shutdown().then((clean) => process.exit(clean ? 0 : 1));
  });
  // The primary's death leaves this worker without elements: leave with it.
  process.once('disconnect', () => {
    void publisher.shutdown().then(() => process.exit(0));
  });
}

/** IPC's structured clone turns Buffers into Uint8Arrays: view them as Buffers again (no copy). */
const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

const mapValues = <T, U>(record: Readonly<Record<string, T>>, map: (value: T) => U) =>
  Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)]));

function revivedElement(element: LoggedElement): LoggedElement {
  return { ...element, documents: mapValues(element.documents, asBuffer) as LoggedElement['documents'] };
}

function revivedLatest(latest: LatestElement): LatestElement {
  return {
    ...latest,
    bodies: mapValues(latest.bodies, (bodies) => mapValues(bodies, asBuffer)) as unknown as LatestElement['bodies'],
  };
}
