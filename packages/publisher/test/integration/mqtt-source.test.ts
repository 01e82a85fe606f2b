import { randomUUID } from 'node:crypto';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { MqttSource, type MqttSourceOptions } from '../../src/source/mqtt-source.js';
import type { RecordMapping } from '../../src/source/record-mapping.js';
import { PrivateMosquitto } from '../support/mosquitto.js';
import { Elements, RecordingLogger } from '../support/source-recorder.js';

/** For state no event announces: checked every 10 ms, with a deadline for a broken server, not a measure of speed. */
const patience = { timeout: 30_000, interval: 10 };


/** The Mosquitto every test machine runs; the broker-loss test uses a private one instead. */
const sharedBroker = 'mqtt://127.0.0.1:1883';

const mapping: RecordMapping = {
  sensor: 'https://data.example.org/sensors/{sensor}',
  observedProperty: 'http://example.org/airTemperature',
  featureOfInterest: 'https://data.example.org/rooms/{room}',
  result: '{value}',
  resultTime: '{at}',
  unit: 'http://qudt.org/vocab/unit/DEG_C',
};

const sources: MqttSource[] = [];
const clients: MqttClient[] = [];

afterEach(async () => {
  await Promise.all(sources.splice(0).map((source) => source.stop()));
  await Promise.all(clients.splice(0).map((client) => client.endAsync(true)));
});

/** A unique topic prefix, so that parallel runs on the shared broker never see each other's messages. */
const prefix = () => `rdf-stream-test/${randomUUID()}`;

/** Starts a source and resolves once it is connected and subscribed. */
async function startSource(options: Partial<MqttSourceOptions> & Pick<MqttSourceOptions, 'topics' | 'payload'>) {
  const logger = new RecordingLogger();
  const elements = new Elements();
  const source = new MqttSource({
    url: sharedBroker,
    reconnectPeriodMs: 100,
    connectTimeoutMs: 2_000,
    maxPayloadBytes: 16 * 1024,
    logger,
    ...options,
  });
  sources.push(source);
  source.start(elements.sink);
  await vi.waitUntil(() => source.health().state === 'ok', patience);
  return { source, logger, elements };
}

async function publisher(url = sharedBroker): Promise<MqttClient> {
  const client = await connectAsync(url, { reconnectPeriod: 0 });
  clients.push(client);
  return client;
}

describe('MqttSource', () => {
  it('maps each JSON message to one element', async () => {
    const topic = prefix();
    const { source, elements } = await startSource({ topics: [`${topic}/+/temperature`], payload: 'json', mapping });
    const client = await publisher();

    const first = elements.next();
    const reading = { sensor: 't1', room: 'hall', value: 21.5, at: '2026-03-07T10:00:00Z' };
    await client.publishAsync(`${topic}/hall/temperature`, JSON.stringify(reading), { qos: 1 });
    expect(await first).toEqual([
      {
        id: 'o1',
        sensor: 'https://data.example.org/sensors/t1',
        observedProperty: 'http://example.org/airTemperature',
        featureOfInterest: 'https://data.example.org/rooms/hall',
        simpleResult: 21.5,
        unit: 'http://qudt.org/vocab/unit/DEG_C',
        resultTime: new Date('2026-03-07T10:00:00Z'),
      },
    ]);

    const second = elements.next();
    const batch = [
      { sensor: 't2', room: 'cellar', value: 12, at: 1_772_877_600_000 },
      { sensor: 't3', room: 'attic', value: 25, at: 1_772_877_600_000 },
    ];
    await client.publishAsync(`${topic}/house/temperature`, JSON.stringify(batch), { qos: 1 });
    expect((await second).map((o) => [o.sensor, o.simpleResult])).toEqual([
      ['https://data.example.org/sensors/t2', 12],
      ['https://data.example.org/sensors/t3', 25],
    ]);
    expect(elements.received).toHaveLength(2);
    expect(source.health()).toMatchObject({ state: 'ok', recordsRejected: 0 });
    expect(source.health().lastSuccessAt).not.toBeNull();
  });

  it('reads the observations of RDF messages', async () => {
    const topic = prefix();
    const { elements } = await startSource({ topics: [topic], payload: 'rdf' });
    const client = await publisher();
    const turtle = `
      @prefix sosa: <http://www.w3.org/ns/sosa/> .
      @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
      <https://data.example.org/obs/42> a sosa:Observation ;
        sosa:madeBySensor <https://data.example.org/sensors/p1> ;
        sosa:observedProperty <http://example.org/freeSpaces> ;
        sosa:hasFeatureOfInterest <https://data.example.org/parkings/p1> ;
        sosa:hasSimpleResult 17 ;
        sosa:resultTime "2026-03-07T10:00:00Z"^^xsd:dateTime .`;
    const element = elements.next();
    await client.publishAsync(topic, turtle, { qos: 1 });
    expect(await element).toEqual([
      {
        id: '42',
        sensor: 'https://data.example.org/sensors/p1',
        observedProperty: 'http://example.org/freeSpaces',
        featureOfInterest: 'https://data.example.org/parkings/p1',
        simpleResult: 17,
        resultTime: new Date('2026-03-07T10:00:00Z'),
      },
    ]);
  });

  it('counts and logs unreadable messages, publishes nothing for them, and goes on', async () => {
    const topic = prefix();
    const { source, elements, logger } = await startSource({ topics: [topic], payload: 'json', mapping, maxPayloadBytes: 200 });
    const client = await publisher();
    const element = elements.next();
    await client.publishAsync(topic, 'not json {', { qos: 1 });
    await client.publishAsync(topic, JSON.stringify({ sensor: 'big', padding: 'x'.repeat(300) }), { qos: 1 });
    await client.publishAsync(topic, JSON.stringify({ sensor: 't1', room: 'hall', value: 'warm', at: 0 }), { qos: 1 });
    await client.publishAsync(topic, JSON.stringify({ sensor: 't1', room: 'hall', value: 20, at: 0 }), { qos: 1 });

    // Messages on one topic arrive in order: the valid one comes last.
    expect((await element).map((o) => o.simpleResult)).toEqual([20]);
    expect(elements.received).toHaveLength(1);
    expect(source.health()).toMatchObject({ state: 'ok', recordsRejected: 3 });
    const rejections = logger.calls.filter((call) => call.level === 'warn').map((call) => call.fields);
    expect(rejections).toEqual([
      expect.objectContaining({ topic, reason: expect.stringMatching(/^unparseable JSON: /) }),
      expect.objectContaining({ topic, reason: expect.stringMatching(/limit is 200/) }),
      expect.objectContaining({ topic, index: 0, reason: 'result {value} must be a number with a unit, got "warm"' }),
    ]);
  });

  it('refuses a JSON payload without a mapping, a mapping it cannot use, and a URL that is no broker', () => {
    const options = {
      url: sharedBroker,
      topics: ['t'],
      reconnectPeriodMs: 100,
      connectTimeoutMs: 100,
      maxPayloadBytes: 100,
      logger: new RecordingLogger(),
    };
    const badMapping = { ...mapping, result: 'v={value}' };
    expect(() => new MqttSource({ ...options, payload: 'json' })).toThrow('JSON payloads need a mapping');
    expect(() => new MqttSource({ ...options, payload: 'json', mapping: badMapping })).toThrow(/^Unusable record mapping: result: /);
    const http = { ...options, payload: 'rdf' as const, url: 'http://127.0.0.1:1883' };
    expect(() => new MqttSource(http)).toThrow('Unsupported MQTT broker URL scheme: http:');
  });

  describe('when the broker goes away', () => {
    let broker: PrivateMosquitto;

    beforeAll(async () => {
      broker = await PrivateMosquitto.start();
    });

    afterAll(async () => {
      await broker?.close();
    });

    it('degrades, reconnects when it is back, subscribes again and publishes the next message', async () => {
      const topic = prefix();
      const { source, elements } = await startSource({ url: broker.url, topics: [topic], payload: 'json', mapping });

      await broker.kill();
      await vi.waitUntil(() => source.health().state === 'degraded', patience);
      expect(source.health().detail).toMatch(/^lost the connection to the broker/);
      await vi.waitUntil(() => /^cannot connect to the broker: ECONNREFUSED/.test(source.health().detail ?? ''), patience);

      await broker.restart();
      await vi.waitUntil(() => source.health().state === 'ok', patience);
      const client = await publisher(broker.url);
      const element = elements.next();
      await client.publishAsync(topic, JSON.stringify({ sensor: 't9', room: 'hall', value: 1, at: 0 }), { qos: 1 });
      expect((await element)[0]?.sensor).toBe('https://data.example.org/sensors/t9');

      await source.stop();
      await source.stop();
      expect(source.health().state).toBe('stopped');
    });
  });

  describe('with a broker that requires credentials', () => {
    let broker: PrivateMosquitto;

    beforeAll(async () => {
      broker = await PrivateMosquitto.start({ publisher: 'broker-secret-1' });
    });

    afterAll(async () => {
      await broker?.close();
    });

    it('connects with the username and password it is given', async () => {
      const topic = prefix();
      const { elements } = await startSource({ url: broker.url, topics: [topic], payload: 'json', mapping, username: 'publisher', password: 'broker-secret-1' });
      const client = await connectAsync(broker.url, { reconnectPeriod: 0, username: 'publisher', password: 'broker-secret-1' });
      clients.push(client);
      const element = elements.next();
      await client.publishAsync(topic, JSON.stringify({ sensor: 't3', room: 'lab', value: 2, at: 0 }), { qos: 1 });
      expect((await element)[0]?.sensor).toBe('https://data.example.org/sensors/t3');
    });

    it('is degraded, saying why, with a wrong password', async () => {
      const logger = new RecordingLogger();
      const source = new MqttSource({
        url: broker.url,
        topics: [prefix()],
        payload: 'json',
        mapping,
        username: 'publisher',
        password: 'not-the-password',
        reconnectPeriodMs: 100,
        connectTimeoutMs: 2_000,
        maxPayloadBytes: 1024,
        logger,
      });
      sources.push(source);
      source.start(new Elements().sink);
      await vi.waitUntil(() => /Not authorized|Bad User Name or Password/i.test(source.health().detail ?? ''), patience);
      expect(source.health().state).toBe('degraded');
      expect(JSON.stringify(logger.calls)).not.toContain('not-the-password');
    });
  });
});
