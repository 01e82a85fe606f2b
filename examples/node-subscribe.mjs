// Subscribes to a live RDF stream and prints every observation it brings, with the latency of
// each update measured on this machine, then a latency summary; stops after --updates updates.
//
//   pnpm exec tsx examples/node-subscribe.mjs [stream-url] [--updates 5] [--transport auto|sse|websocket|poll|long-poll]
//
// The stream URL defaults to the demo stream that `pnpm start` serves. tsx is needed because the
// workspace's client package exports its TypeScript sources; an installed, built client runs
// under plain `node`.
import { parseArgs } from 'node:util';
import { LatencyRecorder, subscribe } from '@rdf-stream/client/live';

const usage = 'usage: node-subscribe.mjs [stream-url] [--updates N] [--transport auto|sse|websocket|poll|long-poll]';
const transports = ['auto', 'sse', 'websocket', 'poll', 'long-poll'];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    updates: { type: 'string', default: '5' },
    transport: { type: 'string', default: 'auto' },
  },
});
const streamUrl = positionals[0] ?? 'http://127.0.0.1:8080/streams/parking';
const updates = Number(values.updates);
if (!Number.isInteger(updates) || updates < 1) fail(`--updates must be a whole number of updates, at least 1 (got "${values.updates}")`);
if (!transports.includes(values.transport)) fail(`--transport must be one of ${transports.join(', ')} (got "${values.transport}")`);
try {
  new URL(streamUrl);
} catch {
  fail(`not a URL: "${streamUrl}"`);
}

const SOSA = 'http://www.w3.org/ns/sosa/';

/** The observations among an element's quads: one record of SOSA values per observation. */
function observationsOf(quads) {
  const bySubject = new Map();
  for (const quad of quads) {
    if (!quad.predicate.value.startsWith(SOSA)) continue;
    const observation = bySubject.get(quad.subject.value) ?? {};
    observation[quad.predicate.value.slice(SOSA.length)] = quad.object.value;
    bySubject.set(quad.subject.value, observation);
  }
  return [...bySubject.values()].filter((observation) => 'hasSimpleResult' in observation || 'hasResult' in observation);
}

/** The last segment of an IRI (after `#` or `/`): enough to tell sensors and properties apart. */
const shortName = (iri = '?') => iri.replace(/^.*[#/](?=[^#/]+$)/, '');

const stop = new AbortController();
const latency = new LatencyRecorder();
const subscription = subscribe(streamUrl, { transport: values.transport, signal: stop.signal });
let received = 0;
try {
  for await (const event of subscription) {
    if (event.type === 'update') {
      received++;
      latency.record(event.latencyMs);
      console.log(`update ${event.seq} generated ${event.generatedAt?.toISOString() ?? '?'}, latency ${event.latencyMs.toFixed(1)} ms over ${event.transport}`);
      for (const observation of observationsOf(event.quads)) {
        const result = observation.hasSimpleResult ?? observation.hasResult;
        console.log(
          `  ${shortName(observation.madeBySensor)} on ${shortName(observation.hasFeatureOfInterest)}: ${shortName(observation.observedProperty)} = ${result} at ${observation.resultTime ?? '?'}`,
        );
      }
      if (received === updates) stop.abort();
    } else if (event.type === 'gap') {
      console.warn(`elements lost after ${event.afterSeq} (${event.reason}); resumed at ${event.resumedAtSeq}`);
    } else if (event.type === 'reconnect') {
      console.warn(`connection lost (${event.reason}); reconnecting in ${event.delayMs} ms`);
    } else {
      console.warn(`skipped an undecodable element: ${event.error.message}`);
    }
  }
} catch (error) {
  fail(`${streamUrl}: ${error instanceof Error ? error.message : String(error)}`);
}
const summary = latency.summary();
console.log(`${received} updates; latency p50 ${summary.p50.toFixed(1)} ms, max ${summary.max.toFixed(1)} ms`);

function fail(message) {
  console.error(`${message}\n${usage}`);
  process.exit(2);
}
