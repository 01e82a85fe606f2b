/**
 * Where a smart poller's latency goes, from the per-request traces the fleet writes when
 * `RDF_STREAM_BENCH_POLL_TRACE` names a directory (`src/fleet/poll-trace.ts`):
 *   RDF_STREAM_BENCH_POLL_TRACE=/tmp/trace pnpm bench --mode poll --clients 8000 --poll-strategy smart --throughput-duration 0
 *   pnpm exec tsx packages/bench/scripts/poll-trace.ts /tmp/trace [--interval 5000] [--skip 15000]
 * For the elements after the ramp (`--skip` ms after the first request): requests per client and
 * element, when each request was sent relative to the moment the element was due (generated +
 * interval), how long its answer took, how many found the element not served yet (304), and
 * the requests in flight per 50 ms around the due moment.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { interval: { type: 'string', default: '5000' }, skip: { type: 'string', default: '15000' } } });
const directory = positionals[0];
if (directory === undefined) throw new Error('usage: poll-trace.ts <trace directory> [--interval ms] [--skip ms]');
const intervalMs = Number(values.interval);

interface Row { client: number; sentAtMs: number; answeredAtMs: number; status: number; changed: boolean; known: number; answer: number }
const rows: Row[] = [];
for (const [fileIndex, name] of readdirSync(directory).filter((file) => file.startsWith('poll-trace-')).entries()) {
  const lines = readFileSync(join(directory, name), 'utf8').trim().split('\n').slice(1);
  for (const line of lines) {
    const [client, sentAtMs, answeredAtMs, status, changed, known, answer] = line.split(',').map(Number) as number[];
    // Client numbers are per worker: one million apart per file keeps them distinct.
    rows.push({ client: (client as number) + fileIndex * 1e6, sentAtMs: sentAtMs as number, answeredAtMs: answeredAtMs as number, status: status as number, changed: changed === 1, known: known as number, answer: answer as number });
  }
}
rows.sort((a, b) => a.sentAtMs - b.sentAtMs);
const startMs = (rows[0]?.sentAtMs ?? 0) + Number(values.skip);
const measured = rows.filter((row) => row.sentAtMs >= startMs && !Number.isNaN(row.known));

const quantiles = (numbers: number[]) => {
  const sorted = [...numbers].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return `n ${sorted.length}, p1 ${at(0.01)}, p10 ${at(0.1)}, p50 ${at(0.5)}, p90 ${at(0.9)}, p99 ${at(0.99)}, max ${at(1)}`;
};

// Per element (by the generation the client knew): who asked, when, what came back.
const elements = new Map<number, Row[]>();
for (const row of measured) {
  const list = elements.get(row.known) ?? [];
  list.push(row);
  elements.set(row.known, list);
}
const clients = new Set(measured.map((row) => row.client)).size;
console.log(`${measured.length} requests of ${clients} clients after the ramp; ${elements.size} elements asked for`);
for (const [known, list] of [...elements].sort((a, b) => a[0] - b[0])) {
  const dueMs = known + intervalMs;
  const got = list.filter((row) => row.changed);
  const unchanged = list.filter((row) => !row.changed);
  const firstServed = Math.min(...got.map((row) => row.answeredAtMs - dueMs));
  const perClient = new Map<number, number>();
  for (const row of list) perClient.set(row.client, (perClient.get(row.client) ?? 0) + 1);
  const attempts = [...perClient.values()];
  console.log(`\nelement due at ${new Date(dueMs).toISOString()}: ${list.length} requests (${(list.length / perClient.size).toFixed(2)} per client), ${got.length} got it, ${unchanged.length} answered 304/unchanged; first answer with it ${firstServed} ms after due`);
  console.log(`  clients needing 1/2/3/4+ requests: ${[1, 2, 3].map((k) => attempts.filter((a) => a === k).length).join('/')}/${attempts.filter((a) => a >= 4).length}`);
  console.log(`  sent − due (all):        ${quantiles(list.map((row) => row.sentAtMs - dueMs))}`);
  console.log(`  sent − due (304):        ${quantiles(unchanged.map((row) => row.sentAtMs - dueMs))}`);
  console.log(`  answer time (304):       ${quantiles(unchanged.map((row) => row.answeredAtMs - row.sentAtMs))}`);
  console.log(`  sent − due (got it):     ${quantiles(got.map((row) => row.sentAtMs - dueMs))}`);
  console.log(`  answer time (got it):    ${quantiles(got.map((row) => row.answeredAtMs - row.sentAtMs))}`);
  console.log(`  latency (got it, vs generation): ${quantiles(got.map((row) => row.answeredAtMs - row.answer))}`);
  const bins = new Map<number, number>();
  for (const row of list) {
    const bin = Math.floor((row.sentAtMs - dueMs) / 50) * 50;
    bins.set(bin, (bins.get(bin) ?? 0) + 1);
  }
  console.log(`  requests sent per 50 ms from due: ${[...bins].sort((a, b) => a[0] - b[0]).map(([bin, n]) => `${bin}:${n}`).join(' ')}`);
}
