import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublisher, loadConfig, ManualSource, type Observation, type Publisher } from '@rdf-stream/publisher';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface LivePublisher {
  readonly origin: string;
  readonly streamIri: string;
  /** Publishes one element of three facilities (values vary with `n`), generated now or at `generatedAt`. */
  push(n: number, generatedAt?: Date): Promise<number>;
  /** Stops the publisher and starts it again on the same port and the same (file) log. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real publisher on a real port, fed by hand (one element a second announced), with a file
 * log so that a restart keeps the stream's history and epoch.
 */
export async function startLivePublisher(): Promise<LivePublisher> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'dashboard-test-'));
  const config = loadConfig({
    argv: ['--port', String(port), '--log-level', 'silent', '--log', 'file', '--data-dir', dataDir, '--interval', '1', '--max-event-loop-turn-ms', '0'],
    env: {},
  });
  let publisher: Publisher;
  const open = async () => {
    publisher = await createPublisher(config, { source: new ManualSource(1_000), processMetrics: false });
    await publisher.start();
    await publisher.listen();
  };
  await open();
  const streamIri = `${config.baseUrl}/streams/${config.streamId}`;
  return {
    origin: config.baseUrl,
    streamIri,
    async push(n, generatedAt = new Date()) {
      const hub = publisher.hubs.get(config.streamId)!;
      const observations: Observation[] = [1, 2, 3].map((facility) => ({
        id: `p${facility}`,
        sensor: `${streamIri}/sensors/p${facility}`,
        observedProperty: 'http://vocab.datex.org/terms#parkingNumberOfVacantSpaces',
        featureOfInterest: `${streamIri}/facilities/p${facility}`,
        simpleResult: 100 + facility * 10 + (n % 7),
      }));
      const element = await hub.publish(observations, generatedAt);
      await hub.broadcaster.notify();
      return element.seq;
    },
    async restart() {
      await publisher.shutdown();
      await open();
    },
    async close() {
      await publisher.shutdown();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
