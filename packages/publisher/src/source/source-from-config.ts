import type { PublisherConfig } from '../config/config-schema.js';
import type { StreamConfig } from '../config/stream-config.js';
import { streamIri } from '../model/stream-element.js';
import type { ElementSource } from './element-source.js';
import { ManualSource } from './manual-source.js';
import { MqttSource } from './mqtt-source.js';
import { ParkingSimulator } from './parking-simulator.js';
import { ReplaySource } from './replay-source.js';
import { WebApiSource } from './web-api-source.js';
import type { Logger } from '../clock-and-logger.js';

/** A mapping, a recording or a source option that cannot be used, found when the source is built. */
export class SourceConfigError extends Error {
  override readonly name = 'SourceConfigError';
}

/**
 * Builds the source a stream's configuration declares. The sources check their own options (a
 * mapping, a recording) when built; what they refuse is thrown as a `SourceConfigError` naming
 * the stream.
 */
export function createSource(stream: StreamConfig, config: PublisherConfig, logger: Logger): ElementSource {
  try {
    return buildSource(stream, config, logger);
  } catch (error) {
    throw new SourceConfigError(`stream "${stream.id}": ${(error as Error).message}`, { cause: error });
  }
}

function buildSource(stream: StreamConfig, config: PublisherConfig, logger: Logger): ElementSource {
  const intervalMs = stream.intervalSeconds == null ? null : stream.intervalSeconds * 1000;
  const retry = { initialMs: config.sourceRetryInitialMs, maxMs: config.sourceRetryMaxMs };
  const { source } = stream;
  switch (source.kind) {
    case 'simulator':
      return new ParkingSimulator({
        streamIri: streamIri(config.baseUrl, stream.id),
        facilities: source.facilities,
        intervalMs: intervalMs ?? config.intervalSeconds * 1000,
        seed: source.seed,
      });
    case 'replay':
      return new ReplaySource({
        file: source.file,
        ...(source.format === undefined ? {} : { format: source.format }),
        speed: source.speed,
        loop: source.loop,
        maxFileBytes: config.replayMaxFileBytes,
        logger,
      });
    case 'web-api':
      return new WebApiSource({
        url: source.url,
        ...(source.format === undefined ? {} : { format: source.format }),
        pollIntervalMs: source.pollSeconds * 1000,
        timeoutMs: source.timeoutMs,
        maxBodyBytes: config.webApiMaxBodyBytes,
        retry,
        headers: { ...source.headers, ...source.secretHeaders },
        mapping: source.mapping,
        ...(source.identity === 'state' ? { stateIriBase: `${streamIri(config.baseUrl, stream.id)}/observations/` } : {}),
        logger,
      });
    case 'mqtt':
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
        connectTimeoutMs: config.mqttConnectTimeoutMs,
        maxPayloadBytes: config.mqttMaxPayloadBytes,
        logger,
      });
    case 'ingest':
      // Its elements are POSTed (see the ingest route): the source only stands for it in /health.
      return new ManualSource(intervalMs, 'ingest');
  }
}
