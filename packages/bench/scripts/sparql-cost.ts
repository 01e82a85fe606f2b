/**
 * What a SPARQL query costs, and what it costs everyone else: a publisher (its own process) on
 * a synthetic history of `--history` demo elements and the simulator, then
 *   1. the wall time of the average-free-spaces query (examples/average-free-spaces.rq) over the
 *      latest element, the last 100 and the last 1 000 elements: the first query (which loads
 *      the engine, or parses the window) and `--queries` more;
 *   2. the latency (generation to receipt) of `--subscribers` SSE subscribers for `--seconds`
 *      without queries, then as long again while `--concurrency` clients query the last 1 000
 *      elements back to back (the query thread always busy).
 * Usage: flock /tmp/bench.lock pnpm exec tsx packages/bench/scripts/sparql-cost.ts [--subscribers 500] [--seconds 20]
 */
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createParser } from 'eventsource-parser';
import { freePort, syntheticHistory } from '@rdf-stream/publisher/testing';
import { PublisherProcess } from '../src/process/publisher-process.js';

const { values } = parseArgs({
  options: {
    history: { type: 'string', default: '1000' },
    queries: { type: 'string', default: '20' },
    subscribers: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '2' },
  },
});
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const { dataDir } = await syntheticHistory(Number(values.history), base);
const publisher = await PublisherProcess.start({
  port,
  flags: ['--log', 'file', '--data-dir', dataDir, '--log-level', 'warn', '--interval', '1', '--max-event-loop-turn-ms', '0'],
});
try {
  const query = readFileSync(new URL('../../../examples/average-free-spaces.rq', import.meta.url), 'utf8');
  const endpoint = `${base}/streams/parking/sparql`;
  const timed = async (params: string) => {
    const started = performance.now();
    const response = await fetch(`${endpoint}?${params}`, { method: 'POST', body: new URLSearchParams({ query }), headers: { accept: 'text/csv' } });
    const text = await response.text();
    if (!response.ok) throw new Error(`${response.status} ${text}`);
    return performance.now() - started;
  };
  for (const [label, params] of [['latest element', ''], ['last 100 elements', 'elements=100'], ['last 1 000 elements', 'elements=1000']] as const) {
    const first = await timed(params);
    const next: number[] = [];
    for (let index = 0; index < Number(values.queries); index++) next.push(await timed(params));
    console.log(`${label}: first ${first.toFixed(1)} ms; next ${next.length}: ${summary(next)}`);
  }

  const latencies: number[] = [];
  const subscribers = await Promise.all(Array.from({ length: Number(values.subscribers) }, () => subscribe(`${base}/streams/parking/events?format=ntriples`, latencies)));
  const seconds = Number(values.seconds) * 1000;
  await new Promise((resolve) => setTimeout(resolve, seconds));
  console.log(`SSE latency, ${subscribers.length} subscribers, no queries: ${summary(latencies.splice(0))}`);
  let queried = 0;
  let running = true;
  const loops = Array.from({ length: Number(values.concurrency) }, async () => {
    while (running) {
      await timed('elements=1000');
      queried++;
    }
  });
  await new Promise((resolve) => setTimeout(resolve, seconds));
  running = false;
  await Promise.all(loops);
  console.log(`SSE latency, ${subscribers.length} subscribers, ${queried} queries over 1 000 elements meanwhile: ${summary(latencies.splice(0))}`);
  for (const close of subscribers) close();
} finally {
  await publisher.stop();
}

/** An SSE subscriber recording each element's latency (receipt − prov:generatedAtTime); resolves once connected. */
function subscribe(url: string, latencies: number[]): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const request = get(url, { headers: { accept: 'text/event-stream', 'accept-encoding': 'identity' } }, (response) => {
      // The first element on connect is the latest, older than the measurement: not counted.
      let first = true;
      const parser = createParser({
        onEvent: (event) => {
          const at = /generatedAtTime> "([^"]+)"/.exec(event.data)?.[1];
          if (at === undefined || event.event !== undefined) return;
          if (!first) latencies.push(Date.now() - Date.parse(at));
          first = false;
        },
      });
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => parser.feed(chunk));
      resolve(() => request.destroy());
    });
    request.on('error', reject);
  });
}

function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (quantile: number) => sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))]?.toFixed(1) ?? '–';
  return `n=${sorted.length} min ${at(0)} · p50 ${at(0.5)} · p95 ${at(0.95)} · p99 ${at(0.99)} · max ${at(1)} ms`;
}
