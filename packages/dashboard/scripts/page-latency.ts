/**
 * The live page's latency, side by side with the command line's, on the same stream at the same
 * time; and what the page's main thread was busy with meanwhile.
 *
 *   pnpm --filter @rdf-stream/dashboard exec tsx scripts/page-latency.ts [--count 150] [--interval-ms 1000] [--from-load]
 *
 * Builds the page from the sources as they are, starts a publisher in this process with the demo
 * stream (the parking simulator, one element every `--interval-ms`), opens the stream's page in
 * headless Chromium (Debian's, as the tests drive it) and waits until it is live with a first
 * query result; then runs `rdf-stream subscribe --transport sse --count N` beside it (with
 * `--from-load`, the command line first, and the page opened once it runs: the page's start-up,
 * the query engine's loading and its first, cold evaluation, are in the period). For each
 * element the command line printed, generated after the page was opened, the page's latency is when the page showed it (its sequence
 * number written, on the page's clock) minus the element's generation: the same machine, one
 * clock. The page records its long tasks (`longtask`) and long animation frames
 * (`long-animation-frame`, with the scripts they ran) over the same period. Reports, never
 * asserts: run it under `flock /tmp/bench.lock`.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startTestPublisher } from '@rdf-stream/publisher/testing';
import { buildPage } from '../src/index.js';
import { launchChromium } from '../test/support/browser.js';

const { values: args } = parseArgs({
  options: { count: { type: 'string', default: '150' }, 'interval-ms': { type: 'string', default: '1000' }, 'from-load': { type: 'boolean', default: false } },
});
/** Measure from the page's navigation on (its start-up included), instead of from its first query result. */
const fromLoad = args['from-load'];
const count = Number(args.count);
const intervalMs = Number(args['interval-ms']);

interface LongTask {
  readonly startMs: number;
  readonly durationMs: number;
  readonly attribution: string;
}
interface LongFrame {
  readonly startMs: number;
  readonly durationMs: number;
  readonly blockingMs: number;
  readonly scripts: ReadonlyArray<{ readonly invoker: string; readonly sourceURL: string; readonly functionName: string; readonly durationMs: number }>;
}
interface PagePerf {
  readonly longTasks: LongTask[];
  readonly frames: LongFrame[];
  /** `[seq, Date.now()]` when the page wrote the sequence number of an element it shows. */
  readonly shown: Array<[number, number]>;
}

/**
 * Installed before the page's own scripts: observers only, nothing of the page is changed. Plain
 * JavaScript text, not a function of this file: what TypeScript compiles a function to may name
 * helpers that exist here but not in the page.
 */
const observePage = `
  const perf = { longTasks: [], frames: [], shown: [] };
  window.pagePerf = perf;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      perf.longTasks.push({
        startMs: entry.startTime,
        durationMs: entry.duration,
        attribution: (entry.attribution ?? []).map((item) => item.name + '/' + item.containerType).join(','),
      });
    }
  }).observe({ type: 'longtask', buffered: true });
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      perf.frames.push({
        startMs: entry.startTime,
        durationMs: entry.duration,
        blockingMs: entry.blockingDuration,
        scripts: entry.scripts.map((script) => ({ invoker: script.invoker, sourceURL: script.sourceURL, functionName: script.sourceFunctionName, durationMs: script.duration })),
      });
    }
  }).observe({ type: 'long-animation-frame', buffered: true });
  const finder = new MutationObserver(() => {
    const target = document.getElementById('last-seq');
    if (target === null) return;
    finder.disconnect();
    new MutationObserver(() => {
      const seq = Number(target.textContent);
      if (Number.isInteger(seq)) perf.shown.push([seq, Date.now()]);
    }).observe(target, { childList: true, characterData: true, subtree: true });
  });
  finder.observe(document, { childList: true, subtree: true });
`;

/**
 * What posting the latest element to a worker costs the sending thread, per message: as its
 * N-Quads text, and as quads shaped as RDF/JS's (structured clone). Plain JavaScript text, as
 * `observePage`.
 */
const measureTransfer = (latestUrl: string) => `(async () => {
  const text = await (await fetch(${JSON.stringify(latestUrl)})).text();
  const node = (value) => ({ termType: 'NamedNode', value });
  const quads = text.trim().split('\\n').map((line) => {
    const [subject, predicate, ...rest] = line.split(' ');
    return { subject: node(subject), predicate: node(predicate), object: { termType: 'Literal', value: rest.slice(0, -2).join(' '), language: '', datatype: node('x') }, graph: node(rest.at(-2)) };
  });
  const sink = new Worker(URL.createObjectURL(new Blob(['onmessage = () => {};'], { type: 'text/javascript' })));
  const costMs = (message) => {
    const rounds = 500;
    const started = performance.now();
    for (let round = 0; round < rounds; round++) sink.postMessage(message);
    return (performance.now() - started) / rounds;
  };
  costMs(text);
  costMs(quads);
  const result = { bytes: text.length, quads: quads.length, textMs: costMs(text), quadsMs: costMs(quads) };
  sink.terminate();
  return result;
})()`;

interface Distribution {
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

/** Nearest-rank percentiles, the same rule for both sides. */
function distribution(values: readonly number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
  return { count: sorted.length, p50: at(50), p90: at(90), p99: at(99), max: sorted.at(-1) ?? Number.NaN };
}

const row = (name: string, d: Distribution) =>
  `${name.padEnd(34)} n=${String(d.count).padStart(4)}  p50 ${d.p50.toFixed(1).padStart(7)}  p90 ${d.p90.toFixed(1).padStart(7)}  p99 ${d.p99.toFixed(1).padStart(7)}  max ${d.max.toFixed(1).padStart(7)}  ms`;

/** Runs the command line's subscriber until it printed `count` live updates: seq → latency (ms). */
function runCli(url: string): { done: Promise<Map<number, number>>; started: Promise<void> } {
  const child = spawn('pnpm', ['--silent', '--filter', '@rdf-stream/client', 'rdf-stream', 'subscribe', url, '--transport', 'sse', '--count', String(count)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const latencies = new Map<number, number>();
  let buffered = '';
  let markStarted: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      const match = /^seq=(\d+)\tlatency=([\d.]+) ms/.exec(line);
      if (match !== null) {
        latencies.set(Number(match[1]), Number(match[2]));
        markStarted();
      } else if (line.includes('latency ms p50')) console.log(`CLI summary: ${line.trim()}`);
    }
  });
  const done = new Promise<Map<number, number>>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(latencies) : reject(new Error(`rdf-stream subscribe exited with ${code}`)))),
  );
  return { done, started };
}

/** What a script file of the page bundles, said in a word (the names are hashes). */
function describeScript(directory: string, url: string): string {
  if (url === '') return '(no script: style, layout, paint)';
  const name = url.slice(url.lastIndexOf('/') + 1);
  try {
    const text = readFileSync(join(directory, name), 'utf8');
    const kind = name.startsWith('query-worker') ? 'query worker' : text.includes('@comunica') || text.includes('ActorQueryProcess') ? 'Comunica chunk' : name.startsWith('page-') ? 'page entry' : 'chunk';
    return `${name} (${kind})`;
  } catch {
    return name;
  }
}

const built = await buildPage();
const publisher = await startTestPublisher({ source: 'simulator', intervalMs });
const chromium = await launchChromium();
try {
  const page = await chromium.context.newPage();
  await page.addInitScript({ content: observePage });
  const open = async () => {
    await page.goto(publisher.streamUrl);
    await page.waitForFunction(() => document.getElementById('connection-state')?.textContent === 'live', undefined, { timeout: 60_000 });
    await page.waitForFunction(() => Number(document.getElementById('query-result')?.dataset['results']) >= 1, undefined, { timeout: 60_000 });
    const engine = await page.evaluate(() => document.getElementById('query-result')?.closest('section')?.dataset['queryEngine'] ?? 'main thread');
    console.log(`page live with a first query result (query engine: ${engine})`);
  };
  let cli: ReturnType<typeof runCli>;
  let fromMs: number;
  if (fromLoad) {
    console.log(`starting the command line for ${count} updates at ${intervalMs} ms, then opening the page beside it`);
    cli = runCli(publisher.streamUrl);
    await cli.started;
    await open();
    fromMs = 0;
  } else {
    await open();
    console.log(`starting the command line beside the page for ${count} updates at ${intervalMs} ms`);
    cli = runCli(publisher.streamUrl);
    await cli.started;
    fromMs = await page.evaluate(() => performance.now());
  }
  const cliLatencies = await cli.done;
  const openedAtMs = await page.evaluate(() => performance.timeOrigin);
  const perf = await page.evaluate(() => (window as unknown as { pagePerf: PagePerf }).pagePerf);
  const panel = await page.evaluate(() =>
    Object.fromEntries(['count', 'p50', 'p90', 'p99', 'max'].map((name) => [name, document.getElementById(`latency-${name}`)?.textContent ?? '–'])),
  );

  const pageLatencies: number[] = [];
  const cliMatched: number[] = [];
  const shownAt = new Map<number, number>();
  for (const [seq, at] of perf.shown) if (!shownAt.has(seq)) shownAt.set(seq, at);
  for (const [seq, latencyMs] of cliLatencies) {
    const at = shownAt.get(seq);
    const element = await publisher.hub.log.get(seq);
    // An element generated before the page was opened was late for no fault of the page.
    if (at === undefined || element === undefined || element.generatedAt.getTime() < openedAtMs) continue;
    pageLatencies.push(at - element.generatedAt.getTime());
    cliMatched.push(latencyMs);
  }
  console.log(`\nLatency from generation, the same ${pageLatencies.length} elements (of ${cliLatencies.size} the command line saw${fromLoad ? ', from the page opened on' : ''}):`);
  console.log(row('rdf-stream subscribe (CLI)', distribution(cliMatched)));
  console.log(row('live page (element shown)', distribution(pageLatencies)));
  console.log(`live page's own panel (since load): ${panel['count']} updates, p50 ${panel['p50']}, p90 ${panel['p90']}, p99 ${panel['p99']}, max ${panel['max']}`);

  const tasks = perf.longTasks.filter((task) => task.startMs >= fromMs);
  const frames = perf.frames.filter((frame) => frame.startMs >= fromMs);
  const periodS = cliLatencies.size * (intervalMs / 1_000);
  const taskDurations = distribution(tasks.map((task) => task.durationMs));
  console.log(
    `\nLong tasks (> 50 ms) on the page's main thread over the period (≈ ${periodS.toFixed(0)} s${fromLoad ? ', from the page opened on' : ''}): ${tasks.length}, ` +
      `${tasks.reduce((sum, task) => sum + task.durationMs, 0).toFixed(0)} ms in all` +
      (tasks.length === 0 ? '' : `; p50 ${taskDurations.p50.toFixed(0)} ms, max ${taskDurations.max.toFixed(0)} ms; attribution ${[...new Set(tasks.map((task) => task.attribution))].join(' ')}`),
  );
  console.log(`Long animation frames: ${frames.length}, blocking ${frames.reduce((sum, frame) => sum + frame.blockingMs, 0).toFixed(0)} ms in all. Script time in them, by script and function:`);
  const byScript = new Map<string, { durationMs: number; count: number; maxMs: number }>();
  for (const frame of frames) {
    for (const script of frame.scripts) {
      const key = `${describeScript(built.outputDirectory, script.sourceURL)} ${script.functionName || '(anonymous)'} via ${script.invoker}`;
      const entry = byScript.get(key) ?? { durationMs: 0, count: 0, maxMs: 0 };
      byScript.set(key, { durationMs: entry.durationMs + script.durationMs, count: entry.count + 1, maxMs: Math.max(entry.maxMs, script.durationMs) });
    }
  }
  for (const [key, entry] of [...byScript].sort((a, b) => b[1].durationMs - a[1].durationMs).slice(0, 12)) {
    console.log(`  ${entry.durationMs.toFixed(0).padStart(6)} ms in ${String(entry.count).padStart(3)} frames (max ${entry.maxMs.toFixed(0)} ms)  ${key}`);
  }
  const slowest = [...pageLatencies].sort((a, b) => b - a).slice(0, 5);
  console.log(`\nSlowest page updates: ${slowest.map((ms) => `${ms.toFixed(0)} ms`).join(', ')}`);

  // What handing each update to a worker would cost the main thread, had the worker not its own
  // subscription: posting the element's N-Quads text, or its quads (structured clone of RDF/JS-shaped objects).
  const transfer = (await page.evaluate(measureTransfer(`${publisher.streamUrl}/latest?format=nquads`))) as { bytes: number; quads: number; textMs: number; quadsMs: number };
  console.log(
    `\nPosting one element (${transfer.quads} quads, ${transfer.bytes} bytes of N-Quads) to a worker costs the main thread ` +
      `${(transfer.textMs * 1_000).toFixed(0)} µs as text, ${(transfer.quadsMs * 1_000).toFixed(0)} µs as quads (structured clone); ` +
      'the query worker subscribes itself instead, and receives nothing from the page.',
  );
} finally {
  await chromium.close();
  await publisher.close();
}
