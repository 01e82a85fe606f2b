import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Parser } from 'n3';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestPublisher, type TestPublisher } from '@rdf-stream/publisher/testing';

let running: TestPublisher | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const packageRoot = fileURLToPath(new URL('../..', import.meta.url));
const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
const countQuery = fileURLToPath(new URL('../../examples/average-free-spaces.rq', import.meta.url));

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `rdf-stream …` as a user runs it; `finished` resolves when the process exits by itself. */
function rdfStream(...args: string[]): { child: ChildProcessByStdio<null, Readable, Readable>; output: () => string; finished: Promise<Finished> } {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, ...args], { cwd: packageRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const finished = once(child, 'exit').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  return { child, output: () => stdout, finished };
}

/** A port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('rdf-stream', () => {
  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const { code, stdout } = await rdfStream('--version').finished;
    expect(stdout).toBe(`${version}\n`);
    expect(code).toBe(0);
  });

  it.each([['subscribe'], ['query', '--query', countQuery]])('%s rejects a URL that is not http(s) in one line, with status 2', async (...command) => {
    const { code, stdout, stderr } = await rdfStream(...command, 'not-a-url').finished;
    expect(stderr).toBe('rdf-stream: not-a-url is not an http(s) URL\n');
    expect(stdout).toBe('');
    expect(code).toBe(2);
  });

  it.each(['auto', 'sse', 'websocket', 'poll', 'long-poll'])('subscribe --transport %s says ECONNREFUSED in one line when nothing listens, with status 3', async (transport) => {
    const url = `http://127.0.0.1:${await closedPort()}/streams/parking`;
    const { code, stderr } = await rdfStream('subscribe', url, '--transport', transport).finished;
    expect(stderr).toBe(`rdf-stream: cannot reach ${url}: ECONNREFUSED\n`);
    expect(code).toBe(3);
  });

  it('query says ECONNREFUSED in one line when nothing listens, with status 3', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/streams/parking`;
    const { code, stderr } = await rdfStream('query', '--query', countQuery, url).finished;
    expect(stderr).toBe(`rdf-stream: cannot reach ${url}: ECONNREFUSED\n`);
    expect(code).toBe(3);
  });

  it.each(['sse', 'websocket'])('subscribe --transport %s --count stops after that many updates and exits 0 by itself', async (transport) => {
    const publisher = await startTestPublisher();
    running = publisher;
    const { finished } = rdfStream('subscribe', publisher.streamUrl, '--transport', transport, '--count', '2');
    await publisher.untilSubscribers(1);
    await publisher.push();
    await publisher.push();
    const { code, stdout, stderr } = await finished;
    expect(stderr).toBe('');
    expect(stdout.match(new RegExp(`^seq=\\d+\\tlatency=[\\d.-]+ ms\\ttriples=\\d+\\t${transport}$`, 'gm'))).toHaveLength(2);
    expect(stdout).toMatch(new RegExp(`^2 updates over ${transport};`, 'm'));
    expect(code).toBe(0);
  }, 60_000);

  it('subscribe --print nquads writes each update\'s quads to stdout, and the rest to stderr', async () => {
    const publisher = await startTestPublisher();
    running = publisher;
    const { finished } = rdfStream('subscribe', publisher.streamUrl, '--transport', 'sse', '--count', '2', '--print', 'nquads');
    await publisher.untilSubscribers(1);
    await publisher.push();
    await publisher.push();
    const { code, stdout, stderr } = await finished;
    const quads = new Parser({ format: 'application/n-quads' }).parse(stdout);
    const graphs = new Set(quads.filter((q) => q.graph.termType === 'NamedNode').map((q) => q.graph.value));
    expect([...graphs]).toHaveLength(2);
    for (const graph of graphs) {
      expect(graph).toMatch(/\/elements\//);
      // The default-graph generation time names the element's graph.
      expect(quads.some((q) => q.graph.termType === 'DefaultGraph' && q.subject.value === graph && q.predicate.value === 'http://www.w3.org/ns/prov#generatedAtTime')).toBe(true);
    }
    expect(quads.some((q) => q.predicate.value.startsWith('http://www.w3.org/ns/sosa/'))).toBe(true);
    expect(stdout).not.toMatch(/seq=|updates over/);
    expect(stderr.match(/^seq=\d+\tlatency=/gm)).toHaveLength(2);
    expect(stderr).toMatch(/^2 updates over sse;/m);
    expect(code).toBe(0);
  }, 60_000);

  it('subscribe --print jsonld writes one JSON-LD document per update and line', async () => {
    const publisher = await startTestPublisher();
    running = publisher;
    const { finished } = rdfStream('subscribe', publisher.streamUrl, '--transport', 'sse', '--count', '2', '--print', 'jsonld');
    await publisher.untilSubscribers(1);
    await publisher.push();
    await publisher.push();
    const { code, stdout } = await finished;
    const documents = stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(documents).toHaveLength(2);
    for (const document of documents) expect(JSON.stringify(document)).toMatch(/\/elements\//);
    expect(code).toBe(0);
  }, 60_000);

  it('subscribe --print exits 0 quietly when the reader of stdout closes early', async () => {
    const publisher = await startTestPublisher();
    running = publisher;
    const { child, finished } = rdfStream('subscribe', publisher.streamUrl, '--transport', 'sse', '--count', '3', '--print', 'ntriples');
    await publisher.untilSubscribers(1);
    const firstDocument = once(child.stdout, 'data');
    await publisher.push();
    await firstDocument;
    // As `| head -1` does: the reading end of the pipe closes while the command still writes.
    child.stdout.destroy();
    await publisher.push();
    await publisher.push();
    const { code, stderr } = await finished;
    expect(stderr).not.toMatch(/EPIPE|Error/);
    expect(code).toBe(0);
  }, 60_000);

  /** The example query on `streamUrl`, over a window of each single element: every element closes one. */
  function oneElementQuery(streamUrl: string): string {
    const file = join(mkdtempSync(join(tmpdir(), 'rdf-stream-cli-')), 'query.rq');
    const text = readFileSync(countQuery, 'utf8').replace('<http://127.0.0.1:8080/streams/parking>', `<${streamUrl}>`).replace('[RANGE PT30S STEP PT10S]', '[ELEMENTS 1]');
    writeFileSync(file, text);
    return file;
  }

  it('query --results csv writes each result as a CSV document, its window line on stderr', async () => {
    const publisher = await startTestPublisher();
    running = publisher;
    const { finished } = rdfStream('query', '--query', oneElementQuery(publisher.streamUrl), '--no-history', '--results', 'csv', '--count', '1');
    await publisher.untilSubscribers(1);
    await publisher.push([10, 100]);
    const { code, stdout, stderr } = await finished;
    const [header, ...rows] = stdout.split('\r\n');
    expect(header).toBe('facility,averageFree,observations');
    expect(rows.map((row) => row.replace(/^[^,]*\//, ''))).toEqual(['p1,10.0,1', 'p2,100.0,1', '']);
    expect(stderr).toMatch(/^window <http:\/\/example\.org\/windows\/last-30s> \[.* 1 elements, latency/m);
    expect(code).toBe(0);
  }, 60_000);

  it('query --results json writes SPARQL JSON results', async () => {
    const publisher = await startTestPublisher();
    running = publisher;
    const { finished } = rdfStream('query', '--query', oneElementQuery(publisher.streamUrl), '--no-history', '--results', 'json', '--count', '1');
    await publisher.untilSubscribers(1);
    await publisher.push([10, 100]);
    const { code, stdout } = await finished;
    const document = JSON.parse(stdout) as { head: { vars: string[] }; results: { bindings: Array<Record<string, { type: string; value: string }>> } };
    expect(document.head.vars).toEqual(['facility', 'averageFree', 'observations']);
    expect(document.results.bindings.map((row) => [row.facility?.type, row.facility?.value.replace(/.*\//, ''), row.observations?.value])).toEqual([
      ['uri', 'p1', '1'],
      ['uri', 'p2', '1'],
    ]);
    expect(code).toBe(0);
  }, 60_000);

  it('subscribe exits 1 when its --duration ends without an update', async () => {
    running = await startTestPublisher();
    const { code, stdout, stderr } = await rdfStream('subscribe', running.streamUrl, '--transport', 'sse', '--duration', '1').finished;
    expect(stdout).toMatch(/^0 updates over sse;/m);
    expect(stderr).toBe(`rdf-stream: no update from ${running.streamUrl}\n`);
    expect(code).toBe(1);
  }, 60_000);

  it('query exits 1 when its --duration ends without a result', async () => {
    running = await startTestPublisher();
    const { code, stderr } = await rdfStream('query', '--query', countQuery, running.streamUrl, '--no-history', '--duration', '1').finished;
    expect(stderr).toBe('rdf-stream: no result: no window of the query closed\n');
    expect(code).toBe(1);
  }, 60_000);

  it('a usage error of the command line exits 2', async () => {
    const { code, stderr } = await rdfStream('subscribe', 'http://127.0.0.1:8080/streams/parking', '--count', '0').finished;
    expect(stderr).toMatch(/^error: option '--count <updates>' argument '0' is invalid\. expected a positive whole number$/m);
    expect(code).toBe(2);
  });
});
