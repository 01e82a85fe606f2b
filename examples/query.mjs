// Runs a continuous SPARQL query over windows of a live RDF stream and prints each result as
// its window closes: the average free spaces per facility of the demo parking stream.
//
//   pnpm exec tsx examples/query.mjs [stream-url] [--window 'RANGE PT30S STEP PT10S'] [--results 3]
//
// --window is an RSP-QL window: `RANGE <duration> STEP <duration>` (event time; the first result
// comes at once, from the stream's history) or `ELEMENTS <n> [STEP <m>]` (the last n elements).
// The query is evaluated by Comunica on each window's triples.
import { parseArgs } from 'node:util';
import { runContinuousQuery, RspQlSyntaxError } from '@rdf-stream/client';

const usage = "usage: query.mjs [stream-url] [--window 'RANGE PT30S STEP PT10S' | 'ELEMENTS 5'] [--results N]";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    window: { type: 'string', default: 'RANGE PT30S STEP PT10S' },
    results: { type: 'string', default: '3' },
  },
});
const streamUrl = positionals[0] ?? 'http://127.0.0.1:8080/streams/parking';
const maxResults = Number(values.results);
if (!Number.isInteger(maxResults) || maxResults < 1) fail(`--results must be a whole number of results, at least 1 (got "${values.results}")`);
try {
  new URL(streamUrl);
} catch {
  fail(`not a URL: "${streamUrl}"`);
}

const query = `
PREFIX sosa: <http://www.w3.org/ns/sosa/>
REGISTER RSTREAM <http://example.org/queries/average-free-spaces> AS
SELECT ?facility (AVG(?free) AS ?averageFree) (COUNT(?free) AS ?observations)
FROM NAMED WINDOW <http://example.org/windows/w> ON <${streamUrl}> [${values.window}]
WHERE {
  WINDOW <http://example.org/windows/w> {
    ?observation sosa:hasFeatureOfInterest ?facility ;
                 sosa:hasSimpleResult ?free .
  }
}
GROUP BY ?facility
ORDER BY ?facility`;

const stop = new AbortController();
let printed = 0;
try {
  for await (const result of runContinuousQuery(query, { signal: stop.signal })) {
    printed++;
    const [window] = result.windows;
    const span = window === undefined ? '' : ` over ${window.elements} elements`;
    console.log(`result ${printed}${span}: latency ${result.latencyMs.toFixed(0)} ms, evaluated in ${result.evaluationMs.toFixed(0)} ms`);
    for (const row of result.bindings ?? []) {
      const facility = row.facility?.value.replace(/^.*\//, '') ?? '?';
      console.log(`  ${facility}: average ${Number(row.averageFree?.value).toFixed(1)} free spaces over ${row.observations?.value} observations`);
    }
    if (printed === maxResults) stop.abort();
  }
} catch (error) {
  if (error instanceof RspQlSyntaxError) fail(`--window "${values.window}" makes an invalid query: ${error.message}`);
  fail(`${streamUrl}: ${error instanceof Error ? error.message : String(error)}`);
}

function fail(message) {
  console.error(`${message}\n${usage}`);
  process.exit(2);
}
