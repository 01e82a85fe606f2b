import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { QueryResult } from '../../src/query/continuous-query.js';
import { runContinuousQuery } from '../../src/query/run-continuous-query.js';
import { startTestPublisher, type TestPublisher } from '@rdf-stream/publisher/testing';

/** For state no event announces: checked every 10 ms, with a deadline for a broken server, not a measure of speed. */
const patience = { timeout: 30_000, interval: 10 };

let running: TestPublisher | undefined;
let stop: AbortController;
afterEach(async () => {
  stop?.abort();
  await running?.close();
  running = undefined;
});

const example = readFileSync(new URL('../../examples/average-free-spaces.rq', import.meta.url), 'utf8');

/** The example query, on this test's publisher, with count windows so that no clock is involved. */
const exampleOn = (streamUrl: string) =>
  example.replace('<http://127.0.0.1:8080/streams/parking>', `<${streamUrl}>`).replace('[RANGE PT30S STEP PT10S]', '[ELEMENTS 2]');

describe('continuous query against a real publisher', () => {
  it('averages free spaces per facility over each window of pushed elements', async () => {
    running = await startTestPublisher();
    stop = new AbortController();
    const results: QueryResult[] = [];
    const consuming = (async () => {
      for await (const result of runContinuousQuery(exampleOn(running!.streamUrl), { signal: stop.signal, transport: 'sse' })) results.push(result);
    })();
    await running!.untilSubscribers(1);
    await running.push([10, 100]);
    await running.push([20, 300]);
    await running.push([0, 0]);
    await running.push([40, 100]);
    await vi.waitUntil(() => results.length === 2, patience);
    const rows = results.map((result) =>
      (result.bindings ?? []).map((row) => [row.facility!.value.replace(/.*\//, ''), Number(row.averageFree!.value), Number(row.observations!.value)]),
    );
    expect(rows).toEqual([
      [
        ['p1', 15, 2],
        ['p2', 200, 2],
      ],
      [
        ['p1', 20, 2],
        ['p2', 50, 2],
      ],
    ]);
    for (const result of results) {
      expect(result.latencyMs).toBeGreaterThanOrEqual(0);
      expect(result.windows[0]!.elements).toBe(2);
    }
    stop.abort();
    await consuming;
  });

  it('closes its subscriptions when the consumer breaks out, without a signal', async () => {
    const publisher = await startTestPublisher();
    running = publisher;
    const consuming = (async () => {
      for await (const result of runContinuousQuery(exampleOn(publisher.streamUrl), { transport: 'sse', replayHistory: false })) return result;
      return undefined;
    })();
    await publisher.untilSubscribers(1);
    await publisher.push([10, 100]);
    await publisher.push([20, 300]);
    expect((await consuming)?.windows[0]!.elements).toBe(2);
    await publisher.untilSubscribers(0);
  });
});

describe('a continuous query over time windows starts full', () => {
  const countQuery = (streamUrl: string) => `PREFIX sosa: <http://www.w3.org/ns/sosa/>
REGISTER RSTREAM <http://example.org/q> AS
SELECT (COUNT(?free) AS ?observations) (SUM(?free) AS ?total)
FROM NAMED WINDOW <http://example.org/w> ON <${streamUrl}> [RANGE PT30S]
WHERE { WINDOW <http://example.org/w> { ?o sosa:hasSimpleResult ?free } }`;

  it('a RANGE PT30S query answers at once with the last 30 s, replayed from the history', async () => {
    running = await startTestPublisher({ flags: ['--page-elements', '3'] });
    const nowMs = Date.now();
    // One element too old for the window, then four within its 30 s, over two pages and a half.
    for (const [ageMs, free] of [[45_000, 1_000], [25_000, 1], [20_000, 2], [10_000, 3], [2_000, 4]] as const) {
      await running.push([free], new Date(nowMs - ageMs));
    }
    stop = new AbortController();
    const results = runContinuousQuery(countQuery(running.streamUrl), { signal: stop.signal, transport: 'sse' });
    const beforeStartMs = Date.now();
    const first = (await results.next()).value as QueryResult;
    const answeredMs = Date.now();
    stop.abort();
    await results.return(undefined);
    // The first window ends when the query started and holds the four recent elements.
    const [window] = first.windows;
    expect(window!.end - window!.start).toBe(30_000);
    expect(window!.end).toBeGreaterThanOrEqual(beforeStartMs);
    expect(window!.end).toBeLessThanOrEqual(answeredMs);
    expect(window!.elements).toBe(4);
    expect(first.bindings!.map((row) => [Number(row.observations!.value), Number(row.total!.value)])).toEqual([[4, 10]]);
  });

  it('replayHistory: false keeps the old behaviour: windows fill from live elements only', async () => {
    running = await startTestPublisher({ flags: ['--page-elements', '3'] });
    await running.push([1_000], new Date(Date.now() - 500));
    stop = new AbortController();
    const fetched: string[] = [];
    const results = runContinuousQuery(countQuery(running.streamUrl).replace('[RANGE PT30S]', '[RANGE PT1S]'), {
      signal: stop.signal,
      transport: 'sse',
      replayHistory: false,
      fetch: (input, init) => {
        fetched.push(String(input));
        return fetch(input, init);
      },
    });
    const first = results.next();
    await running!.untilSubscribers(1);
    await running.push([7]);
    const { value } = (await first) as { value: QueryResult };
    stop.abort();
    await results.return(undefined);
    expect(value.bindings!.map((row) => Number(row.total!.value))).toEqual([7]);
    expect(fetched.some((url) => url.includes('/history'))).toBe(false);
  });
});

describe('the rdf-stream command line', () => {
  const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));
  const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

  it('subscribe prints each update and a latency summary', async () => {
    running = await startTestPublisher();
    const child = spawn(tsx, [cli, 'subscribe', running.streamUrl, '--transport', 'sse', '--duration', '30'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    await running.untilSubscribers(1);
    // Three observations: 19 triples.
    await running.push([1, 2, 3]);
    await running.push([1, 2, 3]);
    await vi.waitUntil(() => (output.match(/^seq=/gm) ?? []).length === 2, { timeout: 25_000, interval: 10 });
    child.kill('SIGINT');
    await once(child, 'exit');
    expect(output).toMatch(/^seq=1\tlatency=-?\d+\.\d ms\ttriples=19\tsse$/m);
    expect(output).toMatch(/2 updates over sse; latency ms p50=[\d.]+ p90=[\d.]+ p99=[\d.]+ max=[\d.]+; requests per update 0\.50/);
  });

  it('query reports a syntax error with its position and exits 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rq-'));
    try {
      writeFileSync(join(dir, 'bad.rq'), 'REGISTER RSTREAM <q> AS SELECT *\nFROM NAMED WINDOW <w> ON <s> [RANGE 30]\nWHERE {}');
      const child = spawn(tsx, [cli, 'query', '--query', join(dir, 'bad.rq')], { stdio: ['ignore', 'pipe', 'pipe'] });
      let errors = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
      const [code] = await once(child, 'exit');
      expect(code).toBe(2);
      expect(errors).toMatch(/rdf-stream: RANGE needs a positive ISO 8601 duration such as PT30S, got 30 at line 2, column 31/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
