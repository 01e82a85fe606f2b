// Follows a live RDF stream by its patches: reads /latest once, then applies each RDF Patch of
// /patches to a local n3 Store that always equals /latest, printing what left and entered and
// the free spaces the store holds now; stops after --patches patches.
//
//   pnpm exec tsx examples/node-deltas.mjs [stream-url] [--patches 3]
//
// The stream URL defaults to the demo stream that `pnpm start` serves.
import { parseArgs } from 'node:util';
import { subscribe } from '@rdf-stream/client/live';

const usage = 'usage: node-deltas.mjs [stream-url] [--patches N]';
const { values, positionals } = parseArgs({ allowPositionals: true, options: { patches: { type: 'string', default: '3' } } });
const streamUrl = positionals[0] ?? 'http://127.0.0.1:8080/streams/parking';
const wanted = Number(values.patches);
if (!Number.isInteger(wanted) || wanted < 1) fail(`--patches must be a whole number, at least 1 (got "${values.patches}")`);

const RESULT = 'http://www.w3.org/ns/sosa/hasSimpleResult';
const FEATURE = 'http://www.w3.org/ns/sosa/hasFeatureOfInterest';
const shortName = (iri) => iri.replace(/^.*[#/](?=[^#/]+$)/, '');

/** Every feature of interest and the result the store (an RDF/JS dataset) holds for it, sorted by name. */
function resultsIn(store) {
  const quads = [...store];
  const featureOf = new Map(quads.filter((q) => q.predicate.value === FEATURE).map((q) => [q.subject.value, q.object.value]));
  return quads
    .filter((q) => q.predicate.value === RESULT)
    .map((q) => `${shortName(featureOf.get(q.subject.value) ?? q.subject.value)}=${q.object.value}`)
    .sort()
    .join(' ');
}

const stop = new AbortController();
let patches = 0;
try {
  for await (const event of subscribe(streamUrl, { deltas: true, signal: stop.signal })) {
    if (event.type === 'snapshot') {
      console.log(`snapshot ${event.id ?? '(empty stream)'}: ${event.store.size} triples`);
    } else if (event.type === 'patch') {
      patches++;
      console.log(`patch ${event.id}: -${event.deleted.length} +${event.added.length} triples (${event.bytes} bytes); store ${event.store.size} triples: ${resultsIn(event.store)}`);
      if (patches === wanted) stop.abort();
    } else if (event.type === 'gap') {
      console.warn(`gap (${event.reason}): reading the snapshot again`);
    } else {
      console.warn(`connection lost (${event.reason}); reconnecting in ${event.delayMs} ms`);
    }
  }
} catch (error) {
  fail(`${streamUrl}: ${error instanceof Error ? error.message : String(error)}`);
}

function fail(message) {
  console.error(`${message}\n${usage}`);
  process.exit(2);
}
