import cluster, { type Worker } from 'node:cluster';
import { once } from 'node:events';
import { pickFreePort } from './bind-free-port.js';
import type { PublisherConfig } from './config/config-schema.js';
import { withListeningPort } from './config/load-config.js';
import { createLogger } from './logger.js';

/** The port the workers listen on, when the primary picked it (`--port 0`). */
const PORT_VARIABLE = 'RDF_STREAM_INSTANCE_PORT';

const workers = () => Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);

/**
 * `--workers N --log redis`: every worker is a whole publisher instance on the shared log, as
 * another host's would be — it follows each stream's log itself, appends what it ingests, and
 * runs a stream's source only while it holds the source's lease — so the primary relays nothing:
 * it forks the workers on the shared port, replaces one that dies (its subscribers reconnect to
 * the others and resume by id), and passes stop signals on.
 */
export async function superviseInstances(configured: PublisherConfig): Promise<void> {
  const logger = createLogger(configured);
  // Every instance mints the same IRIs: with --port 0, the port is picked before any of them starts.
  const port = configured.port === 0 ? await pickFreePort(configured.host, configured.listenBacklog) : configured.port;
  let stopping = false;
  const fork = () => cluster.fork({ [PORT_VARIABLE]: String(port) });
  const started = Array.from({ length: configured.workers }, fork);
  cluster.on('exit', (worker: Worker, code, signal) => {
    if (stopping) return;
    logger.error({ worker: worker.process.pid, code, signal }, 'instance exited, starting another');
    fork();
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'draining the instances before exit');
    const running = workers();
    const exits = running.map((worker) => once(worker, 'exit') as Promise<[number | null]>);
    for (const worker of running) worker.process.kill('SIGTERM');
    const timer = setTimeout(() => {
      logger.error({ clean: false }, 'stopped: instances overran shutdownTimeoutMs');
      process.exit(1);
    }, configured.shutdownTimeoutMs + 1_000);
    void Promise.all(exits).then((codes) => {
      clearTimeout(timer);
      const clean = codes.every(([code]) => code === 0);
      logger.info({ clean }, 'stopped');
      process.exit(clean ? 0 : 1);
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await Promise.all(started.map((worker) => once(worker, 'listening')));
  logger.info({ workers: configured.workers, port }, `${configured.workers} instances on the shared log listen on port ${port}`);
}

/** A worker's configuration: one instance (`workers` 1) on the port the primary chose. */
export function instanceConfig(configured: PublisherConfig): PublisherConfig {
  const picked = process.env[PORT_VARIABLE];
  const config = picked === undefined ? configured : withListeningPort(configured, Number(picked));
  return { ...config, workers: 1 };
}
