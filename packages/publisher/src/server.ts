import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { bindFreePort, boundPort } from './bind-free-port.js';
import { runPrimary, runWorker } from './cluster.js';
import type { PublisherConfig } from './config/config-schema.js';
import { withListeningPort } from './config/load-config.js';
import { redactedUrl } from './log/redis/redis-connection.js';
import { memoryReducerOption } from './node-options.js';
import { socketSendQueue } from './publish/sse/socket-send-queue.js';
import { createPublisher, type Publisher } from './publisher.js';
import { instanceConfig, superviseInstances } from './shared-log-workers.js';

/**
 * Starts the publisher and listens; SIGTERM or SIGINT drains it (see `Publisher.shutdown`) and
 * exits, with status 1 if draining overran `shutdownTimeoutMs`. A second signal exits at once.
 * With `workers` > 1 this process becomes the cluster's primary (see cluster.ts).
 */
export async function runServer(configured: PublisherConfig): Promise<Publisher | undefined> {
  if (configured.workers > 1 && configured.log === 'redis') {
    // Each worker is a whole instance on the shared log (see shared-log-workers.ts).
    if (cluster.isPrimary) {
      await superviseInstances(configured);
      return undefined;
    }
    return runServer(instanceConfig(configured));
  }
  if (configured.workers > 1) {
    await (cluster.isPrimary ? runPrimary(configured) : runWorker(configured));
    return undefined;
  }
  // `--port 0`: bind first, so that the IRIs and links minted from here on name the real port.
  const bound = configured.port === 0 ? await bindFreePort(configured.host, configured.listenBacklog) : undefined;
  const config = bound === undefined ? configured : withListeningPort(configured, boundPort(bound));
  const publisher = await createPublisher(config).catch((error: unknown) => {
    bound?.close();
    throw error;
  });
  const { app } = publisher;
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      app.log.warn({ signal }, 'second signal: exiting without draining');
      process.exit(1);
    }
    stopping = true;
    app.log.info({ signal }, 'draining subscribers before exit');
    publisher.shutdown().then(
      (clean) => {
        app.log.info({ clean }, clean ? 'stopped' : 'stopped: drain overran shutdownTimeoutMs');
        process.exit(clean ? 0 : 1);
      },
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // Before listening: a supervisor may signal as soon as /health answers, or it reads the line below.
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // Listen first: a web-API source may poll this very publisher (examples/smart-city.yaml).
  // Until a stream's first element, its /latest answers 503 with Retry-After: 1.
  const address = await publisher.listen(bound);
  warnIfBacklogCapped(publisher, config.listenBacklog);
  await publisher.start();
  app.log.info(
    {
      address,
      streams: [...publisher.hubs.values()].map((hub) => hub.definition.iri),
      log: config.log === 'file' ? `file: ${config.dataDir}` : config.log === 'redis' ? `redis: ${redactedUrl(config.redisUrl)}` : 'memory (lost at exit)',
      sendQueues: sendQueuesRead(config),
      // Every launcher of the publisher turns it off (docs/configuration.md, "Node's options"); plain `node` does not.
      v8MemoryReducer: memoryReducerOption() === 'off' ? 'off' : 'on (node was started without --no-memory-reducer)',
    },
    `publishing ${[...publisher.hubs.keys()].join(', ')} at ${config.baseUrl}/streams`,
  );
  return publisher;
}

/**
 * How the publisher reads what push clients acknowledged (`subscriberSendQueueReader`), said at
 * start-up: the ioctl needs the optional koffi, whose absence would otherwise go unnoticed.
 */
function sendQueuesRead(config: PublisherConfig): string {
  if (config.subscriberProgressCheckMs === 0) return 'not read (subscriberProgressCheckMs 0)';
  return socketSendQueue(config.subscriberSendQueueReader) === undefined ? '/proc/net/tcp' : 'ioctl(SIOCOUTQ) per socket';
}

/** Linux silently caps the listen backlog at `net.core.somaxconn`: say so, with the fix. */
function warnIfBacklogCapped(publisher: Publisher, listenBacklog: number): void {
  let somaxconn: number;
  try {
    somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim());
  } catch {
    return; // not Linux: nothing to read
  }
  if (somaxconn < listenBacklog) {
    publisher.app.log.warn(
      { listenBacklog, somaxconn },
      `the kernel caps the listen backlog at ${somaxconn} (net.core.somaxconn): raise it with sysctl -w net.core.somaxconn=${listenBacklog}`,
    );
  }
}
