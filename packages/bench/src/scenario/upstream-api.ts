/**
 * The upstream of the `upstream` scenario, run as its own process so that its CPU is measured
 * apart: a small JSON API in the manner of the streaming-proxy study's stock-market servlet — a
 * list of 13 car parks whose free spaces change every `--change-ms` (20 s), `--changes` of them
 * at a time. `GET /parking` answers the list:
 *
 * `{"version": n, "changedAt": ms, "facilities": [{"id": "p01", "free": 120, "changedAt": "ISO"}, …]}`
 *
 * with `ETag: "n"` (a conditional request of an unchanged list is a 304) and `Cache-Control:
 * public, max-age=1` (a cache in front may keep it a second). `changedAt` lets a client compute
 * its latency from the change at the upstream. `GET /stats` answers the requests served so far.
 * Prints `listening` when it accepts connections.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    'change-ms': { type: 'string', default: '20000' },
    changes: { type: 'string', default: '1' },
    facilities: { type: 'string', default: '13' },
  },
});
const changeMs = Number(values['change-ms']);
const changes = Number(values.changes);
const facilities = Array.from({ length: Number(values.facilities) }, (_, index) => ({
  id: `p${String(index + 1).padStart(2, '0')}`,
  free: 100 + index * 17,
  changedAt: new Date().toISOString(),
}));
let version = 1;
let changedAt = Date.now();
let body = render();
let requests = 0;
let notModified = 0;
let next = 0;

function render(): string {
  return JSON.stringify({ version, changedAt, facilities });
}

setInterval(() => {
  changedAt = Date.now();
  version++;
  for (let count = 0; count < changes; count++) {
    const facility = facilities[next++ % facilities.length]!;
    facility.free = (facility.free + 37) % 600;
    facility.changedAt = new Date(changedAt).toISOString();
  }
  body = render();
}, changeMs);

const server = createServer((request, response) => {
  if (request.url === '/stats') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ requests, notModified, version }));
    return;
  }
  requests++;
  const etag = `"${version}"`;
  const headers = { etag, 'cache-control': 'public, max-age=1' };
  if (request.headers['if-none-match'] === etag) {
    notModified++;
    response.writeHead(304, headers);
    response.end();
    return;
  }
  response.writeHead(200, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
});
server.keepAliveTimeout = 65_000;
server.listen(Number(values.port), '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
