import { createServer } from 'node:net';
import { createPublisher, loadConfig, ManualSource, type Observation, type Publisher } from '@rdf-stream/publisher';

export interface TestPublisher {
  readonly publisher: Publisher;
  readonly streamUrl: string;
  /**
   * Publishes one element (generated now, or at `generatedAt`: elements are appended in the
   * order of their generation, so past times must not go backwards) and resolves with its
   * sequence number once it is broadcast.
   */
  push(values?: readonly number[], generatedAt?: Date): Promise<number>;
  close(): Promise<unknown>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * A real publisher on a real socket, fed by hand; announces one element every `intervalMs`.
 * `port` (default: a free one) lets a test start another on the same port after a shutdown;
 * `flags` come last, so `--log file --data-dir …` replaces the memory log.
 */
export async function startTestPublisher(flags: readonly string[] = [], intervalMs: number | null = 5_000, port?: number): Promise<TestPublisher> {
  port ??= await freePort();
  const config = loadConfig({ argv: ['--port', String(port), '--log-level', 'silent', '--log', 'memory', '--max-event-loop-turn-ms', '0', ...flags], env: {} });
  const source = new ManualSource(intervalMs);
  const publisher = await createPublisher(config, { source, processMetrics: false });
  await publisher.start();
  await publisher.listen();
  const hub = publisher.hubs.get(config.streamId)!;
  const streamUrl = hub.definition.iri;
  return {
    publisher,
    streamUrl,
    async push(values = [1, 2, 3], generatedAt = new Date()) {
      const observations: Observation[] = values.map((value, index) => ({
        id: `p${index + 1}`,
        sensor: `${streamUrl}/sensors/p${index + 1}`,
        observedProperty: 'http://vocab.datex.org/terms#parkingNumberOfVacantSpaces',
        featureOfInterest: `${streamUrl}/facilities/p${index + 1}`,
        simpleResult: value,
      }));
      const element = await hub.publish(observations, generatedAt);
      await hub.broadcaster.notify();
      return element.seq;
    },
    close: () => publisher.shutdown(),
  };
}
