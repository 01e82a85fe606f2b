/**
 * The community LDES client replaying a stream's history: fills a data directory with
 * `--elements` demo-size elements (see `syntheticHistory` in `@rdf-stream/publisher/testing`), starts the publisher CLI on it and
 * runs `ldes-client <stream IRI> --ordered ascending`, which fetches the root and every page
 * and prints each member. Reports the members it printed, whether they came once each and in
 * order, the time it took, and the requests and body bytes on the wire: the client talks to a
 * counting proxy in front of the publisher, which replaces the client's `Accept-Encoding` by
 * `--accept-encoding` when given (`identity`: the history uncompressed).
 *
 *   flock /tmp/bench.lock pnpm exec tsx packages/bench/scripts/ldes-replay.ts --elements 10000
 *   flock /tmp/bench.lock pnpm exec tsx packages/bench/scripts/ldes-replay.ts --elements 10000 --accept-encoding identity
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Agent, createServer, request } from 'node:http';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PublisherProcess } from '../src/process/publisher-process.js';
import { syntheticHistory } from '@rdf-stream/publisher/testing';

const { values } = parseArgs({
  options: { elements: { type: 'string', default: '10000' }, port: { type: 'string', default: '18961' }, 'accept-encoding': { type: 'string' } },
});
const total = Number(values.elements);
const base = `http://127.0.0.1:${values.port}`;
const publisherPort = Number(values.port) + 1;
const { dataDir } = await syntheticHistory(total, base, { onProgress: (filled) => process.stderr.write(`\rfilling: ${filled} / ${total}${filled === total ? '\n' : ''}`) });

const publisher = await PublisherProcess.start({
  port: publisherPort,
  flags: ['--data-dir', dataDir, '--base-url', base, '--retained-elements', String(total), '--log-level', 'warn', '--interval', '3600'],
});

/** The client's view of the publisher: every response passed through, its body bytes counted. */
const wire = { requests: 0, bodyBytes: 0, encodings: {} as Record<string, number> };
// A fresh upstream connection per request: a kept-alive one the publisher closes meanwhile would fail it.
const upstreamAgent = new Agent({ keepAlive: false });
const proxy = createServer((incoming, outgoing) => {
  const headers = { ...incoming.headers };
  if (values['accept-encoding'] !== undefined) headers['accept-encoding'] = values['accept-encoding'];
  const forwarded = request({ host: '127.0.0.1', port: publisherPort, path: incoming.url, method: incoming.method, headers, agent: upstreamAgent }, (response) => {
    wire.requests++;
    const encoding = String(response.headers['content-encoding'] ?? 'identity');
    wire.encodings[encoding] = (wire.encodings[encoding] ?? 0) + 1;
    response.on('data', (chunk: Buffer) => (wire.bodyBytes += chunk.length));
    outgoing.writeHead(response.statusCode ?? 502, response.headers);
    response.pipe(outgoing);
  });
  forwarded.on('error', () => outgoing.destroy());
  incoming.pipe(forwarded);
});
proxy.listen(Number(values.port), '127.0.0.1');
await once(proxy, 'listening');

const client = fileURLToPath(new URL('../node_modules/.bin/ldes-client', import.meta.url));
const started = performance.now();
const child = spawn(client, [`${base}/streams/parking`, '--ordered', 'ascending'], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LOG_LEVEL: 'error' } });
const seqs: number[] = [];
let buffered = '';
child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
  buffered += chunk;
  const lines = buffered.split('\n');
  buffered = lines.pop() ?? '';
  for (const line of lines) {
    const match = /^<[^>]*\/elements\/[a-z0-9]+-(\d+)> <http:\/\/www\.w3\.org\/ns\/prov#generatedAtTime>/.exec(line);
    if (match) seqs.push(Number(match[1]));
  }
  process.stderr.write(`\rmembers: ${seqs.length}`);
});
const [code] = await once(child, 'exit');
const seconds = (performance.now() - started) / 1000;
process.stderr.write('\n');
proxy.close();
upstreamAgent.destroy();
await publisher.stop();
rmSync(dataDir, { recursive: true, force: true });
const inOrder = seqs.every((seq, index) => index === 0 || seq > (seqs[index - 1] as number));
console.log(
  JSON.stringify(
    {
      elementsRetained: total + 1,
      membersPrinted: seqs.length,
      distinct: new Set(seqs).size,
      inOrder,
      clientExitCode: code,
      seconds: Math.round(seconds * 10) / 10,
      membersPerSecond: Math.round(seqs.length / seconds),
      acceptEncoding: values['accept-encoding'] ?? "the client's own",
      requests: wire.requests,
      responseEncodings: wire.encodings,
      bodyMegabytes: Math.round(wire.bodyBytes / 1e5) / 10,
    },
    null,
    2,
  ),
);
