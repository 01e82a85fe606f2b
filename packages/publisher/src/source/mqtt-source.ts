import type { Quad } from '@rdfjs/types';
import { createRequire } from 'node:module';
import type * as Mqtt from 'mqtt';
import type { MqttClient } from 'mqtt';
import type { N3Format } from '../model/input-formats.js';
import { parseN3 } from '../model/rdf-input.js';
import { extractObservations } from '../model/extract-observations.js';
import type { Observation } from '../model/observation.js';
import type { ElementSource, ObservationSink, SourceHealth, SourceState } from './element-source.js';
import { type CompiledMapping, compileMapping, logRejections, mapRecords, type RecordMapping, recordsOf } from './record-mapping.js';
import type { Logger } from '../clock-and-logger.js';

export type MqttRdfFormat = N3Format;

export interface MqttSourceOptions {
  /** e.g. `mqtt://127.0.0.1:1883`. */
  readonly url: string;
  /** Wildcards (`+`, `#`) allowed. */
  readonly topics: readonly string[];
  /** `json`: one JSON document per message, mapped by `mapping`; `rdf`: SOSA observations in RDF. */
  readonly payload: 'json' | 'rdf';
  /** For `rdf` payloads; default Turtle. */
  readonly rdfFormat?: MqttRdfFormat;
  /** Required for `json` payloads: a message is an object or an array of records (or holds one at `records`). */
  readonly mapping?: RecordMapping;
  /** Default 1. */
  readonly qos?: 0 | 1;
  /** Default: a random id chosen by mqtt.js. */
  readonly clientId?: string;
  /** Broker credentials (MQTT username and password). */
  readonly username?: string;
  readonly password?: string;
  readonly reconnectPeriodMs: number;
  readonly connectTimeoutMs: number;
  /** Bigger messages are rejected (logged and counted). */
  readonly maxPayloadBytes: number;
  readonly logger: Logger;
}

/** Schemes mqtt.js connects to from Node (an unknown one would make `connect` throw in `start`). */
const brokerProtocols: ReadonlySet<string> = new Set(['mqtt:', 'mqtts:', 'tcp:', 'tls:', 'ws:', 'wss:']);

/** Observations read from one message, and the records or subjects that could not be read. */
interface MessageContent {
  readonly observations: readonly Observation[];
  readonly rejected: ReadonlyArray<{ readonly reason: string }>;
}

function describeError(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : error.message;
}

/**
 * Subscribes to MQTT topics; each message with at least one observation becomes one element.
 * mqtt.js reconnects after a broker loss, and the source subscribes again on every connection
 * (sessions are clean, so the broker forgets subscriptions). Unreadable messages are logged and
 * counted, never thrown.
 */
export class MqttSource implements ElementSource {
  readonly kind = 'mqtt';
  readonly expectedIntervalMs = null;
  readonly #options: MqttSourceOptions;
  /** Without user name and password, for logs. */
  readonly #safeUrl: string;
  /** Set for JSON payloads only. */
  readonly #jsonMapping: CompiledMapping | undefined;
  #client: MqttClient | undefined;
  #started = false;
  #sink: ObservationSink | undefined;
  #stopping: Promise<void> | undefined;
  #connected = false;
  /** Why the source is degraded; `undefined` once connected and subscribed. */
  #detail: string | undefined;
  /** The last connection error, kept to explain the next close without logging every retry. */
  #lastError: string | undefined;
  #lastSuccessAt: string | null = null;
  #recordsRejected = 0;

  /** Throws if the URL or the mapping is unusable, so that a bad configuration fails at start-up. */
  constructor(options: MqttSourceOptions) {
    if (options.payload === 'json' && options.mapping === undefined) throw new Error('JSON payloads need a mapping');
    const compiled = options.mapping === undefined ? undefined : compileMapping(options.mapping);
    const url = new URL(options.url);
    if (!brokerProtocols.has(url.protocol)) throw new Error(`Unsupported MQTT broker URL scheme: ${url.protocol}`);
    this.#safeUrl = `${url.protocol}//${url.host}`;
    this.#options = options;
    this.#jsonMapping = options.payload === 'json' ? compiled : undefined;
  }

  start(sink: ObservationSink): void {
    if (this.#client !== undefined) return;
    this.#started = true;
    const { url, clientId, reconnectPeriodMs, connectTimeoutMs, username, password } = this.#options;
    this.#sink = sink;
    this.#connected = false;
    this.#detail = 'connecting to the broker';
    const client = loadMqtt().connect(url, {
      reconnectPeriod: reconnectPeriodMs,
      connectTimeout: connectTimeoutMs,
      clean: true,
      // Subscriptions are made on every `connect` instead, which also covers a refused first one.
      resubscribe: false,
      ...(clientId === undefined ? {} : { clientId }),
      ...(username === undefined ? {} : { username }),
      ...(password === undefined ? {} : { password }),
    });
    this.#client = client;
    client.on('connect', () => this.#onConnect(client));
    client.on('error', (error) => this.#onError(client, error));
    client.on('close', () => this.#onClose(client));
    client.on('message', (topic, payload) => this.#onMessage(client, topic, payload));
  }

  /** Closes the connection at once (in-flight messages are dropped); idempotent. */
  async stop(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    this.#sink = undefined;
    if (client !== undefined) {
      this.#stopping = client.endAsync(true).catch((error: unknown) => {
        this.#options.logger.warn({ err: error, url: this.#safeUrl }, 'closing the MQTT connection failed');
      });
    }
    await this.#stopping;
  }

  health(): SourceHealth {
    const state: SourceState = this.#client === undefined ? (this.#started ? 'stopped' : 'starting') : this.#detail === undefined ? 'ok' : 'degraded';
    return {
      state,
      ...(state === 'degraded' ? { detail: this.#detail } : {}),
      lastSuccessAt: this.#lastSuccessAt,
      recordsRejected: this.#recordsRejected,
    };
  }

  #onConnect(client: MqttClient): void {
    if (client !== this.#client) return;
    const { topics, qos = 1, logger } = this.#options;
    this.#connected = true;
    this.#lastError = undefined;
    this.#detail = 'subscribing';
    logger.info({ url: this.#safeUrl }, 'connected to the MQTT broker');
    client.subscribe([...topics], { qos }, (error, granted) => {
      if (client !== this.#client || !this.#connected) return;
      const refused = granted?.filter((grant) => grant.qos === 128).map((grant) => grant.topic) ?? [];
      if (error === null && refused.length === 0) {
        this.#detail = undefined;
        this.#lastSuccessAt = new Date().toISOString();
        return;
      }
      this.#detail =
        error === null ? `the broker refused the subscription to ${refused.join(', ')}` : `subscribing failed: ${error.message}`;
      logger.warn({ url: this.#safeUrl, detail: this.#detail }, 'MQTT subscription failed');
    });
  }

  #onError(client: MqttClient, error: Error): void {
    if (client !== this.#client) return;
    const description = describeError(error);
    // Reconnection repeats the same error every period: log it when it changes.
    if (description !== this.#lastError) {
      this.#options.logger.warn({ url: this.#safeUrl, detail: description }, 'MQTT connection error');
    }
    this.#lastError = description;
  }

  #onClose(client: MqttClient): void {
    if (client !== this.#client) return;
    const cause = this.#lastError === undefined ? '' : `: ${this.#lastError}`;
    if (this.#connected) {
      this.#connected = false;
      this.#detail = `lost the connection to the broker${cause}`;
      this.#options.logger.warn({ url: this.#safeUrl }, 'lost the connection to the MQTT broker; reconnecting');
    } else {
      this.#detail = `cannot connect to the broker${cause}`;
    }
  }

  #onMessage(client: MqttClient, topic: string, payload: Buffer): void {
    const sink = this.#sink;
    if (client !== this.#client || sink === undefined) return;
    const { logger } = this.#options;
    this.#lastSuccessAt = new Date().toISOString();
    let content: MessageContent;
    try {
      content = this.#read(payload);
    } catch (error) {
      // Whatever a message holds, it must not break mqtt.js's packet handling: it is rejected.
      this.#recordsRejected++;
      logger.warn({ url: this.#safeUrl, topic, reason: (error as Error).message }, 'MQTT message rejected');
      return;
    }
    this.#recordsRejected += content.rejected.length;
    logRejections(logger, content.rejected, { url: this.#safeUrl, topic });
    if (content.observations.length === 0) return;
    try {
      sink(content.observations, new Date());
    } catch (error) {
      // The publisher's fault, not the message's: logged, and the source goes on.
      logger.error({ err: error, url: this.#safeUrl, topic }, 'publishing an element failed');
    }
  }

  /** The observations of one message; throws (with the reason) if the message cannot be read at all. */
  #read(payload: Buffer): MessageContent {
    const { maxPayloadBytes, rdfFormat = 'turtle' } = this.#options;
    if (payload.byteLength > maxPayloadBytes) {
      throw new Error(`the message has ${payload.byteLength} bytes; the limit is ${maxPayloadBytes}`);
    }
    const text = payload.toString('utf8');
    const mapping = this.#jsonMapping;
    if (mapping === undefined) {
      let quads: Quad[];
      try {
        quads = parseN3(text, rdfFormat);
      } catch (error) {
        throw new Error(`unparseable ${rdfFormat}: ${(error as Error).message}`, { cause: error });
      }
      return extractObservations(quads);
    }
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch (error) {
      throw new Error(`unparseable JSON: ${(error as Error).message}`, { cause: error });
    }
    return mapRecords(recordsOf(document, mapping), mapping);
  }
}

/**
 * mqtt.js, loaded when the first MQTT source starts rather than with the publisher: it takes
 * about as long to load as the rest of the publisher together, and most publishers have no
 * MQTT source (a restart after a crash is back that much sooner).
 */
function loadMqtt(): typeof Mqtt {
  return createRequire(import.meta.url)('mqtt') as typeof Mqtt;
}
