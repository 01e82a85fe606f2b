import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { QueryResult } from '../../src/query/continuous-query.js';
import { runContinuousQuery } from '../../src/query/run-continuous-query.js';
import { startTestPublisher, type TestPublisher } from '../support/publisher.js';
import { waitUntil } from '../support/wait-until.js';

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
    await waitUntil(() => running!.publisher.hubs.get('parking')!.broadcaster.size === 1);
    await running.push([10, 100]);
    await running.push([20, 300]);
    await running.push([0, 0]);
    await running.push([40, 100]);
    await waitUntil(() => results.length === 2);
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
});

describe('the rdf-stream command line', () => {
  const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));
  const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

  it('subscribe prints each update and a latency summary', async () => {
    running = await startTestPublisher();
    const child = spawn(tsx, [cli, 'subscribe', running.streamUrl, '--transport', 'sse', '--duration', '30'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    await waitUntil(() => running!.publisher.hubs.get('parking')!.broadcaster.size === 1, 15_000);
    await running.push();
    await running.push();
    await waitUntil(() => (output.match(/^seq=/gm) ?? []).length === 2, 10_000);
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
