/**
 * How fast a client reaches the recent past of a long history: fills a data directory with
 * `--elements` demo-size elements, one every 5 s up to now (see `syntheticHistory` in
 * `@rdf-stream/publisher/testing`), starts the publisher CLI on it, then subscribes
 * `--runs` times with `from: now − --window-seconds` (what the live page and a continuous
 * query's warm start do) and reports, for each run, the requests sent and the milliseconds
 * until the first element of that window arrived, and until the replay ended. The first run
 * meets a publisher that has read nothing yet (cold), the others what it kept (warm). Also
 * reports the size of the history root, of its time index and of one full page.
 *
 *   flock /tmp/bench.lock pnpm exec tsx packages/bench/scripts/history-jump.ts --elements 100000
 */
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { subscribe } from '@rdf-stream/client';
import { syntheticHistory } from '@rdf-stream/publisher/testing';
import { PublisherProcess } from '../src/process/publisher-process.js';

const { values } = parseArgs({
  options: {
    elements: { type: 'string', default: '100000' },
    'window-seconds': { type: 'string', default: '300' },
    runs: { type: 'string', default: '3' },
    port: { type: 'string', default: '18962' },
  },
});
const total = Number(values.elements);
const windowMs = Number(values['window-seconds']) * 1000;
const base = `http://127.0.0.1:${values.port}`;
const streamUrl = `${base}/streams/parking`;
const { dataDir } = await syntheticHistory(total, base, { onProgress: (filled) => process.stderr.write(`\rfilling: ${filled} / ${total}${filled === total ? '\n' : ''}`) });

const publisher = await PublisherProcess.start({
  port: Number(values.port),
  flags: ['--data-dir', dataDir, '--retained-elements', String(total), '--log-level', 'warn', '--interval', '3600'],
});

interface Run {
  readonly requestsToFirst: number;
  readonly msToFirst: number;
  readonly requestsToEnd: number;
  readonly msToEnd: number;
  readonly elementsReplayed: number;
}

async function run(): Promise<Run> {
  let requests = 0;
  const counting: typeof fetch = (input, init) => {
    if (String(input).includes('/history')) requests++;
    return fetch(input, init);
  };
  const stop = new AbortController();
  const started = performance.now();
  const subscription = subscribe(streamUrl, { transport: 'sse', from: new Date(Date.now() - windowMs), fetch: counting, signal: stop.signal });
  let first: { requests: number; ms: number } | undefined;
  let replayed = 0;
  for await (const event of subscription) {
    if (event.type !== 'update') continue;
    first ??= { requests, ms: performance.now() - started };
    if (event.replayed) replayed++;
    // The newest element: the demo source's one at start, after the `total` filled.
    if ((event.seq ?? 0) >= total + 1) break;
  }
  const msToEnd = performance.now() - started;
  stop.abort();
  if (first === undefined) throw new Error('no element arrived');
  return { requestsToFirst: first.requests, msToFirst: Math.round(first.ms), requestsToEnd: requests, msToEnd: Math.round(msToEnd), elementsReplayed: replayed };
}

const runs: Run[] = [];
for (let index = 0; index < Number(values.runs); index++) {
  runs.push(await run());
  process.stderr.write(`run ${index + 1}: ${JSON.stringify(runs.at(-1))}\n`);
}

const sizeOf = async (url: string, accept: string) => (await (await fetch(url, { headers: { accept } })).arrayBuffer()).byteLength;
const root = `${streamUrl}/history`;
const index = `${root}/index`;
const firstPage = /<([^>]*\/history\/[a-z0-9]+-\d+)>/.exec(await (await fetch(root, { headers: { accept: 'application/n-quads' } })).text())?.[1];
const sizes = {
  rootTrigBytes: await sizeOf(root, 'application/trig'),
  rootNquadsBytes: await sizeOf(root, 'application/n-quads'),
  indexTrigBytes: await sizeOf(index, 'application/trig'),
  indexNquadsBytes: await sizeOf(index, 'application/n-quads'),
  pageNquadsBytes: firstPage === undefined ? undefined : await sizeOf(firstPage, 'application/n-quads'),
};
await publisher.stop();
rmSync(dataDir, { recursive: true, force: true });
console.log(JSON.stringify({ elementsRetained: total + 1, windowSeconds: windowMs / 1000, runs, ...sizes }, null, 2));
