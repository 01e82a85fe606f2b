/**
 * Bytes on the wire per update: whole elements (`/events`) against RDF patches (`/patches`), as
 * written (identity) and gzip-compressed (each event once, as the publisher sends it), for two
 * streams on real sockets:
 *
 * - `demo`: the parking simulator (13 facilities, every value moves each element; observations
 *   named in their element), one element every `--interval-ms`;
 * - `state`: a web-API source with `identity: state` polling a local JSON API of 13 facilities,
 *   where one facility's free spaces change between two polls.
 *
 * For each, the body bytes a subscriber received per event (HTTP chunk framing excluded),
 * averaged over `--updates` events after the first, and the sizes of `/latest` for comparison.
 * Usage: pnpm exec tsx packages/bench/scripts/patch-sizes.ts [--updates 10] [--interval-ms 300] [--port 18610]
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createGunzip } from 'node:zlib';
import { createParser } from 'eventsource-parser';
import { createPublisher, type ElementSource, loadConfig, ParkingSimulator, WebApiSource } from '@rdf-stream/publisher';

const { values } = parseArgs({
  options: {
    updates: { type: 'string', default: '10' },
    'interval-ms': { type: 'string', default: '300' },
    port: { type: 'string', default: '18610' },
  },
});
const updates = Number(values.updates);
const intervalMs = Number(values['interval-ms']);
const port = Number(values.port);

interface Counter {
  readonly label: string;
  /** Body bytes received (compressed for gzip) when each event was complete. */
  readonly atEvent: number[];
  close(): void;
}

/** Opens an event stream and records, at each event, how many body bytes had arrived. */
function follow(url: string, encoding: 'identity' | 'gzip', label: string): Promise<Counter> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', 'accept-encoding': encoding } });
    req.on('error', reject);
    req.on('response', (response) => {
      let wire = 0;
      const atEvent: number[] = [];
      const parser = createParser({ onEvent: () => void atEvent.push(wire) });
      response.on('data', (chunk: Buffer) => {
        wire += chunk.length;
      });
      const body = response.headers['content-encoding'] === 'gzip' ? response.pipe(createGunzip()) : response;
      body.setEncoding('utf8');
      body.on('data', (text: string) => parser.feed(text));
      resolve({ label, atEvent, close: () => req.destroy() });
    });
    req.end();
  });
}

const perEvent = (counter: Counter) => {
  const [first] = counter.atEvent;
  const last = counter.atEvent[updates];
  if (first === undefined || last === undefined) throw new Error(`${counter.label}: ${counter.atEvent.length} events`);
  return Math.round((last - first) / updates);
};

async function latestSizes(streamUrl: string) {
  const sizes: Record<string, number> = {};
  for (const [format, accept] of [['turtle', 'text/turtle'], ['ntriples', 'application/n-triples'], ['jsonld', 'application/ld+json']]) {
    for (const coding of ['identity', 'gzip']) {
      const response = await fetch(`${streamUrl}/latest`, { headers: { accept: accept!, 'accept-encoding': coding } });
      sizes[`${format} ${coding}`] = Number(response.headers.get('content-length') ?? (await response.arrayBuffer()).byteLength);
    }
  }
  return sizes;
}

async function measure(name: string, source: (streamIri: string) => ElementSource, drive?: () => Promise<void>) {
  const config = loadConfig({ argv: ['--port', String(port), '--log', 'memory', '--log-level', 'warn', '--log-format', 'json'], env: {} });
  const streamIri = `${config.baseUrl}/streams/${config.streamId}`;
  const publisher = await createPublisher(config, { source: source(streamIri), processMetrics: false });
  await publisher.start();
  await publisher.listen();
  const hub = publisher.hubs.get(config.streamId)!;
  const counters = await Promise.all([
    follow(`${streamIri}/events?format=turtle`, 'identity', 'events turtle identity'),
    follow(`${streamIri}/events?format=turtle`, 'gzip', 'events turtle gzip'),
    follow(`${streamIri}/events?format=jsonld`, 'identity', 'events jsonld identity'),
    follow(`${streamIri}/events?format=jsonld`, 'gzip', 'events jsonld gzip'),
    follow(`${streamIri}/patches`, 'identity', 'patches identity'),
    follow(`${streamIri}/patches`, 'gzip', 'patches gzip'),
  ]);
  const done = () => counters.every((counter) => counter.atEvent.length > updates);
  while (!done()) {
    await drive?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const latest = await latestSizes(streamIri);
  for (const counter of counters) counter.close();
  await publisher.shutdown();
  const rows = Object.fromEntries(counters.map((counter) => [counter.label, perEvent(counter)]));
  return { name, elements: hub.log.latestSeq, perEvent: rows, latest };
}

// 1. The demo stream.
const demo = await measure('demo (simulator, 13 facilities, every value moves)', (streamIri) =>
  new ParkingSimulator({ streamIri, facilities: 13, intervalMs, seed: 1 }),
);

// 2. A state source: a local API whose one facility of 13 changes between polls.
const spaces = Array.from({ length: 13 }, (_, index) => 100 + index * 7);
const api = createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify(spaces.map((free, index) => ({ id: `p${String(index + 1).padStart(2, '0')}`, free }))));
});
api.listen(port + 1, '127.0.0.1');
await once(api, 'listening');
const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/parking`;
let tick = 0;
let lastChange = 0;
const state = await measure(
  'state (web API, identity: state, 1 of 13 facilities changes per update)',
  (streamIri) =>
    new WebApiSource({
      url: apiUrl,
      pollIntervalMs: 50,
      timeoutMs: 1_000,
      maxBodyBytes: 1 << 20,
      retry: { initialMs: 100, maxMs: 1_000 },
      mapping: {
        sensor: `${streamIri}/sensors/{id}`,
        observedProperty: 'http://vocab.datex.org/terms#parkingNumberOfVacantSpaces',
        featureOfInterest: `${streamIri}/facilities/{id}`,
        result: '{free}',
        id: '{id}',
      },
      stateIriBase: `${streamIri}/observations/`,
      logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
    }),
  async () => {
    if (Date.now() - lastChange < intervalMs) return;
    lastChange = Date.now();
    tick++;
    spaces[tick % 13] = (spaces[tick % 13]! + 1) % 500;
  },
);
api.close();

console.log(JSON.stringify({ date: new Date().toISOString(), node: process.version, updates, results: [demo, state] }, null, 2));
