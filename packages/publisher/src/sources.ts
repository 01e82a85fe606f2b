import type { PublisherConfig } from './config/config-schema.js';
import type { StreamConfig } from './config/stream-config.js';
import { streamIri } from './model/stream-element.js';
import type { ElementSource, SourceHealth, SourceLogger } from './source/element-source.js';
import { MqttSource } from './source/mqtt-source.js';
import { ParkingSimulator } from './source/parking-simulator.js';
import { validateMapping } from './source/record-mapping.js';
import { ReplaySource } from './source/replay-source.js';
import { WebApiSource } from './source/web-api-source.js';

/**
 * The source of an ingest stream: elements arrive by `POST /streams/{id}` (see the ingest
 * route), so it produces nothing by itself; it is there for `/health` and the descriptor.
 */
export class IngestSource implements ElementSource {
  readonly kind = 'ingest';
  readonly expectedIntervalMs: number | null;
  #running = false;

  constructor(expectedIntervalMs: number | null) {
    this.expectedIntervalMs = expectedIntervalMs;
  }

  start(): void {
    this.#running = true;
  }

  stop(): void {
    this.#running = false;
  }

  health(): SourceHealth {
    return { state: this.#running ? 'ok' : 'stopped', recordsRejected: 0 };
  }
}

/** A mapping or a source option that cannot be used, found when the source is built. */
export class SourceConfigError extends Error {
  override readonly name = 'SourceConfigError';
}

/** Builds the source a stream's configuration declares. Throws `SourceConfigError` for unusable options. */
export function createSource(stream: StreamConfig, config: PublisherConfig, logger: SourceLogger): ElementSource {
  const intervalMs = stream.intervalSeconds == null ? null : stream.intervalSeconds * 1000;
  const retry = { initialMs: config.sourceRetryInitialMs, maxMs: config.sourceRetryMaxMs };
  const { source } = stream;
  const checkMapping = (mapping: Parameters<typeof validateMapping>[0] | undefined) => {
    const problems = mapping === undefined ? [] : validateMapping(mapping);
    if (problems.length > 0) {
      throw new SourceConfigError(`stream "${stream.id}": source mapping: ${problems.join('; ')}`);
    }
  };
  switch (source.kind) {
    case 'simulator':
      return new ParkingSimulator({
        streamIri: streamIri(config.baseUrl, stream.id),
        facilities: source.facilities,
        intervalMs: intervalMs ?? config.intervalSeconds * 1000,
        seed: source.seed,
      });
    case 'replay':
      try {
        return new ReplaySource({
          file: source.file,
          ...(source.format === undefined ? {} : { format: source.format }),
          speed: source.speed,
          loop: source.loop,
          maxFileBytes: config.replayMaxFileBytes,
          logger,
        });
      } catch (error) {
        throw new SourceConfigError(`stream "${stream.id}": ${(error as Error).message}`);
      }
    case 'web-api':
      checkMapping(source.mapping);
      return new WebApiSource({
        url: source.url,
        ...(source.format === undefined ? {} : { format: source.format }),
        pollIntervalMs: source.pollSeconds * 1000,
        timeoutMs: source.timeoutMs,
        maxBodyBytes: config.webApiMaxBodyBytes,
        retry,
        headers: { ...source.headers, ...source.secretHeaders },
        mapping: source.mapping,
        logger,
      });
    case 'mqtt':
      checkMapping(source.mapping);
      return new MqttSource({
        url: source.url,
        topics: source.topics,
        payload: source.payload,
        ...(source.rdfFormat === undefined ? {} : { rdfFormat: source.rdfFormat }),
        ...(source.mapping === undefined ? {} : { mapping: source.mapping }),
        qos: source.qos,
        ...(source.username === undefined ? {} : { username: source.username }),
        ...(source.password === undefined ? {} : { password: source.password }),
        reconnectPeriodMs: config.mqttReconnectMs,
        connectTimeoutMs: 10_000,
        maxPayloadBytes: config.mqttMaxPayloadBytes,
        logger,
      });
    case 'ingest':
      return new IngestSource(intervalMs);
  }
}
