import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, openSse, type SseConnection, startTestPublisher, type TestPublisher } from '../../src/testing.js';

/**
 * examples/smart-city.yaml as users start it — every source real: the replay of the shipped
 * recording, the web API (the example polls the publisher's own parking stream), Mosquitto on
 * 127.0.0.1:1883, ingest — with only the port changed.
 */
const TOKEN = 'smart-city-test-token-0123456789';
const repository = (path: string) => fileURLToPath(new URL(`../../../../${path}`, import.meta.url));

let running: TestPublisher;
let mqtt: MqttClient;
const subscriptions: SseConnection[] = [];
const events = (id: string) => {
  const connection = openSse(`${running.url}/streams/${id}/events`);
  void connection.then((c) => subscriptions.push(c));
  return connection;
};

beforeAll(async () => {
  const port = await freePort();
  const text = readFileSync(repository('examples/smart-city.yaml'), 'utf8')
    .replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`)
    .replaceAll('../ontologies/', `${repository('ontologies')}/`);
  running = await startTestPublisher({ config: text, env: { SMART_CITY_INGEST_TOKEN: TOKEN }, flags: ['--port', String(port), '--source-retry-initial-ms', '100'] });
  mqtt = await connectAsync('mqtt://127.0.0.1:1883', { reconnectPeriod: 0 });
});

afterAll(async () => {
  for (const subscription of subscriptions) subscription.close();
  await mqtt?.endAsync();
  await running?.close();
});

describe('examples/smart-city.yaml', () => {
  it('lists its five streams in the catalogue', async () => {
    const catalogue = await (await fetch(`${running.url}/streams`, { headers: { accept: 'application/n-triples' } })).text();
    for (const id of ['parking', 'air-quality', 'parking-api', 'weather', 'building-sensors']) {
      expect(catalogue).toContain(`<${running.url}/streams/${id}> <http://purl.org/dc/terms/title>`);
    }
  });

  it('replays the air-quality recording: publication time as result time, the recorded time kept', async () => {
    const latest = await fetch(`${running.url}/streams/air-quality/latest`, { headers: { accept: 'application/n-triples' } });
    expect(latest.status).toBe(200);
    const body = await latest.text();
    expect(body).toContain('<http://www.w3.org/ns/sosa/phenomenonTime> "2026-03-14T08:00:00.000Z"');
    expect(body).toContain('<http://qudt.org/schema/qudt/hasUnit>');
  });

  it('maps the web API records to a new stream (here: the parking stream read back as JSON)', async () => {
    const sse = await events('parking-api');
    const [event] = await sse.waitForEvents(1);
    expect(event?.data).toContain(`${running.url}/streams/parking/sensors/p01`);
    const health = (await (await fetch(`${running.url}/health`)).json()) as { streams: Record<string, { source: { state: string } }> };
    expect(health.streams['parking-api']?.source.state).toBe('ok');
  });

  it('turns MQTT messages into elements', async () => {
    const sse = await events('weather');
    await mqtt.publishAsync('smart-city/weather/harbour', JSON.stringify({ station: 'harbour', temperature: 11.4, time: '2026-11-22T10:00:00Z' }), {
      qos: 1,
    });
    const [event] = await sse.waitForEvents(1);
    expect(event?.data).toContain('https://data.example.org/weather/stations/harbour');
    expect(event?.data).toContain('http://qudt.org/vocab/unit/DEG_C');
  });

  it('accepts observations posted with the token named by the file', async () => {
    const sse = await events('building-sensors');
    const response = await fetch(`${running.url}/streams/building-sensors`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/turtle' },
      body: `@prefix sosa: <http://www.w3.org/ns/sosa/>. @prefix xsd: <http://www.w3.org/2001/XMLSchema#>.
<obs/1> a sosa:Observation; sosa:madeBySensor <https://example.org/sensors/co2-3>;
  sosa:observedProperty <https://example.org/properties/co2>; sosa:hasFeatureOfInterest <https://example.org/rooms/3-12>;
  sosa:hasSimpleResult 612; sosa:resultTime "2026-11-22T10:00:00Z"^^xsd:dateTime.`,
    });
    expect(response.status).toBe(201);
    const [event] = await sse.waitForEvents(1);
    expect(event?.data).toContain('https://example.org/sensors/co2-3');
  });
});
