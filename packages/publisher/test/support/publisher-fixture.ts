import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PublisherConfig } from '../../src/config/config-schema.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { Observation } from '../../src/model/observation.js';
import { createPublisher, type Publisher, type PublisherOptions } from '../../src/publisher.js';
import type { StreamHub } from '../../src/publish/stream-hub.js';
import { ManualSource } from '../../src/source/manual-source.js';

/** A port that was free a moment ago (the base URL must name the real port). */
/**
 * The publisher runs in the test's own process, whose code (a tight loop of pushes, a query
 * engine loading) blocks the event loop as no real load would: no load shedding, unless a test
 * turns it on (its flags come after these).
 */
const inProcess = ['--max-event-loop-turn-ms', '0'];

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface RunningPublisher {
  readonly publisher: Publisher;
  readonly config: PublisherConfig;
  readonly url: string;
  readonly hub: StreamHub;
  readonly source: ManualSource;
  /** Publishes one element and resolves once its broadcast has been written to every subscriber. */
  push(observations?: readonly Observation[], generatedAt?: Date): Promise<number>;
  close(): Promise<void>;
}

export const sampleObservations = (streamIri: string, values: readonly number[] = [12, 34]): Observation[] =>
  values.map((value, index) => ({
    id: `p${index + 1}`,
    sensor: `${streamIri}/sensors/p${index + 1}`,
    observedProperty: 'http://vocab.datex.org/terms#parkingNumberOfVacantSpaces',
    featureOfInterest: `${streamIri}/facilities/p${index + 1}`,
    simpleResult: value,
  }));

/**
 * Starts a real publisher on a real socket, fed by a `ManualSource` (one element every
 * `intervalSeconds` is announced to caches, but elements come only from `push`).
 */
export async function startPublisher(
  flags: readonly string[] = [],
  options: Omit<PublisherOptions, 'source'> & { intervalMs?: number | null } = {},
): Promise<RunningPublisher> {
  const port = await freePort();
  // In memory unless the test asks for a data directory (`--log file --data-dir …`).
  const config = loadConfig({ argv: ['--port', String(port), '--log-level', 'silent', '--log', 'memory', ...inProcess, ...flags], env: {} });
  const source = new ManualSource(options.intervalMs === undefined ? 5_000 : options.intervalMs);
  const publisher = await createPublisher(config, { ...options, source, processMetrics: false });
  await publisher.start();
  await publisher.listen();
  const hub = publisher.hubs.get(config.streamId)!;
  return {
    publisher,
    config,
    url: config.baseUrl,
    hub,
    source,
    async push(observations = sampleObservations(hub.definition.iri), generatedAt = new Date()) {
      const published = hub.publish(observations, generatedAt);
      const element = await published;
      await hub.broadcaster.notify();
      return element.seq;
    },
    async close() {
      await publisher.shutdown();
    },
  };
}

export interface ConfiguredPublisher {
  readonly publisher: Publisher;
  readonly config: PublisherConfig;
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Starts a real publisher on a real socket from a configuration file (YAML or JSON text, written
 * to a temporary folder with `files` beside it), with the real sources it declares.
 */
export async function startConfiguredPublisher(
  configText: string,
  options: {
    readonly env?: Readonly<Record<string, string>>;
    readonly flags?: readonly string[];
    readonly fileName?: string;
    readonly files?: Readonly<Record<string, string>>;
  } = {},
): Promise<ConfiguredPublisher> {
  const dir = mkdtempSync(join(tmpdir(), 'publisher-config-'));
  const file = join(dir, options.fileName ?? 'publisher.yaml');
  writeFileSync(file, configText);
  for (const [name, text] of Object.entries(options.files ?? {})) writeFileSync(join(dir, name), text);
  const port = await freePort();
  const config = loadConfig({
    argv: ['--config', file, '--port', String(port), '--log-level', 'silent', '--data-dir', join(dir, 'data'), ...inProcess, ...(options.flags ?? [])],
    env: options.env ?? {},
  });
  const publisher = await createPublisher(config, { processMetrics: false });
  await publisher.start();
  await publisher.listen();
  return {
    publisher,
    config,
    url: config.baseUrl,
    async close() {
      await publisher.shutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A publisher whose one stream, `sensors`, takes ingested elements (no shapes) with `token`. */
export function startIngestPublisher(token: string, flags: readonly string[] = []): Promise<ConfiguredPublisher> {
  return startConfiguredPublisher(
    'streams:\n  - id: sensors\n    title: Sensors pushing their observations\n    shape: none\n    source: { kind: ingest, tokenEnv: INGEST_TOKEN }\n',
    { env: { INGEST_TOKEN: token }, flags: ['--log', 'memory', ...flags] },
  );
}
