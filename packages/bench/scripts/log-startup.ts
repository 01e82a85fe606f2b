/**
 * Start-up with a long history: fills a data directory with `--elements` demo-size elements
 * (100 000 by default, about a week of the demo stream), then starts the publisher CLI on it and
 * on an empty one, and reports the time until it serves (`GET /health` answers, every source
 * started), the RSS once started, and the data
 * directory's size. The elements are synthetic: 100 rendered demo elements whose documents are
 * reused with their own ids, so that building the history takes seconds, not minutes.
 *
 *   pnpm exec tsx packages/bench/scripts/log-startup.ts --elements 100000
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { PublisherProcess } from '../src/process/publisher-process.js';
import { syntheticHistory } from '@rdf-stream/publisher/testing';

const { values } = parseArgs({ options: { elements: { type: 'string', default: '100000' }, port: { type: 'string', default: '18960' } } });
const total = Number(values.elements);
const base = `http://127.0.0.1:${values.port}`;

const emptyDir = mkdtempSync(join(tmpdir(), 'log-startup-empty-'));
const { dataDir, fillSeconds } = await syntheticHistory(total, base, { onProgress: (filled) => process.stderr.write(`\rfilling: ${filled} / ${total}${filled === total ? '\n' : ''}`) });
const bytes = Number(execFileSync('du', ['-sb', dataDir]).toString().split('\t')[0]);

async function startOn(dir: string) {
  const started = performance.now();
  const publisher = await PublisherProcess.start({ port: Number(values.port), flags: ['--data-dir', dir, '--retained-elements', String(total), '--log-level', 'info'] });
  const startSeconds = (performance.now() - started) / 1000;
  const rssMiB = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${publisher.pid}/status`, 'utf8'))?.[1]) / 1024;
  // A catch-up from the oldest element reads the whole history from disk.
  const health = (await (await fetch(`${base}/health`)).json()) as { streams: { parking: { latestSeq: number; log: { oldestSeq: number } } } };
  await publisher.stop();
  return { startSeconds: Math.round(startSeconds * 100) / 100, rssMiB: Math.round(rssMiB), latestSeq: health.streams.parking.latestSeq, oldestSeq: health.streams.parking.log.oldestSeq };
}

const withHistory = await startOn(dataDir);
const empty = await startOn(emptyDir);
console.log(
  JSON.stringify(
    {
      elements: total,
      dataDirectoryMiB: Math.round(bytes / 1024 / 1024),
      bytesPerElement: Math.round(bytes / total),
      fillElementsPerSecond: Math.round(total / fillSeconds),
      startWithHistory: withHistory,
      startEmpty: empty,
    },
    null,
    2,
  ),
);
rmSync(dataDir, { recursive: true, force: true });
rmSync(emptyDir, { recursive: true, force: true });
