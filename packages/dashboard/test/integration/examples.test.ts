import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BROWSER_CLIENT_PATH } from '@rdf-stream/protocol';
import { freePort, startTestPublisher, type TestPublisher } from '@rdf-stream/publisher/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildClientFile } from '../../src/index.js';
import { type Chromium, launchChromium, waitForUpdates, watchedPage } from '../support/browser.js';

/**
 * The programs in examples/ and the commands README.md gives for them, run as a user runs them
 * (child processes, curl, a real browser) against a real publisher: a simulated parking stream
 * publishing every second, and an ingest stream as examples/smart-city.yaml declares it. This
 * package holds the test because it is the one that depends on the publisher, the client and a
 * browser.
 */
const repositoryRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const readme = readFileSync(join(repositoryRoot, 'README.md'), 'utf8');
const publisherReadme = readFileSync(join(repositoryRoot, 'packages/publisher/README.md'), 'utf8');
const TOKEN = 'examples-test-token-0123456789abcdef';
/** Each ingest stream has a token of its own: one stream's token is refused by another. */
const SENSORS_TOKEN = 'examples-test-sensors-token-0123456789';
const FACILITIES = 3;

/** The shell command of a README that starts with `start`, its `\`-continued lines joined. */
function documentedCommand(start: string, markdown = readme): string {
  const lines = markdown.split('\n');
  const first = lines.findIndex((line) => line.startsWith(start));
  if (first === -1) throw new Error(`README.md has no command starting with "${start}"`);
  let command = '';
  for (const line of lines.slice(first)) {
    const withoutComment = line.replace(/\s+#\s.*$/, '');
    if (!withoutComment.endsWith('\\')) return command + withoutComment;
    command += `${withoutComment.slice(0, -1)} `;
  }
  throw new Error(`README.md's command "${start}" does not end`);
}

/** The lines of a README from the one that starts with `start` to the first that is `end`. */
function documentedLines(markdown: string, start: string, end: string): string {
  const lines = markdown.split('\n');
  const first = lines.findIndex((line) => line.startsWith(start));
  const last = lines.indexOf(end, first);
  if (first === -1 || last === -1) throw new Error(`no lines from "${start}" to "${end}"`);
  return lines.slice(first, last + 1).join('\n');
}

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const children = new Set<ChildProcess>();

/** Runs a command from the repository root to its end (each child in its own process group). */
async function run(command: string, args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<Finished> {
  const child = spawn(command, args, { cwd: repositoryRoot, env: { ...process.env, ...env }, detached: true });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  children.delete(child);
  return { code, stdout, stderr };
}

/** Ends a child that is still running, with everything it started. */
function stop(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
}

let publisher: TestPublisher;
let origin: string;
/** The publisher's page folder, holding only the browser client (as `pnpm start` builds it): the live page is not needed here. */
let pageAssetsDirectory: string;

beforeAll(async () => {
  pageAssetsDirectory = mkdtempSync(join(tmpdir(), 'examples-page-assets-'));
  await buildClientFile(pageAssetsDirectory);
  publisher = await startTestPublisher({
    pageAssetsDirectory,
    config: `streams:
  - id: parking
    title: Park-and-ride facilities (simulated)
    intervalSeconds: 1
    source: { kind: simulator, facilities: ${FACILITIES}, seed: 1 }
  - id: sensors
    title: Sensors (packages/publisher/README.md)
    intervalSeconds: irregular
    source: { kind: ingest, tokenEnv: SENSORS_TOKEN }
  - id: building-sensors
    title: Observations pushed by building sensors
    intervalSeconds: irregular
    shape: ${join(repositoryRoot, 'ontologies/shapes/stream-element.shacl.ttl')}
    source: { kind: ingest, tokenEnv: SMART_CITY_INGEST_TOKEN }
`,
    env: { SMART_CITY_INGEST_TOKEN: TOKEN, SENSORS_TOKEN },
    flags: ['--log', 'memory'],
  });
  origin = publisher.url;
});

afterEach(() => {
  for (const child of children) stop(child);
});

afterAll(async () => {
  await publisher?.close();
  if (pageAssetsDirectory !== undefined) rmSync(pageAssetsDirectory, { recursive: true, force: true });
});

const observationLine = /^ {2}p0[1-3] on p0[1-3]: parkingNumberOfVacantSpaces = \d+ at \d{4}-\d\d-\d\dT[\d:.]+Z$/;

describe('examples/node-subscribe.mjs', () => {
  it('prints each observation of N updates with its latency, a summary, and exits', async () => {
    const finished = await run('pnpm', ['exec', 'tsx', 'examples/node-subscribe.mjs', `${origin}/streams/parking`, '--updates', '2']);
    expect(finished.stderr).toBe('');
    expect(finished.code).toBe(0);
    const lines = finished.stdout.trim().split('\n');
    const updates = lines.filter((line) => line.startsWith('update '));
    expect(updates).toHaveLength(2);
    for (const update of updates) expect(update).toMatch(/^update \d+ generated \S+Z, latency -?\d+\.\d ms over sse$/);
    expect(lines.filter((line) => observationLine.test(line))).toHaveLength(2 * FACILITIES);
    expect(lines.at(-1)).toMatch(/^2 updates; latency p50 -?\d+\.\d ms, max -?\d+\.\d ms$/);
  }, 60_000);

  it('refuses a bad --updates with a message and status 2', async () => {
    const finished = await run('pnpm', ['exec', 'tsx', 'examples/node-subscribe.mjs', '--updates', 'many']);
    expect(finished.code).toBe(2);
    expect(finished.stderr).toContain('--updates must be a whole number of updates, at least 1 (got "many")');
  }, 60_000);
});

describe('examples/node-deltas.mjs', () => {
  it('prints the snapshot, then each patch with the store it leaves, and exits', async () => {
    const finished = await run('pnpm', ['exec', 'tsx', 'examples/node-deltas.mjs', `${origin}/streams/parking`, '--patches', '2']);
    expect(finished.stderr).toBe('');
    expect(finished.code).toBe(0);
    const lines = finished.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^snapshot [a-z0-9]+-\d+: \d+ triples$/);
    const patches = lines.filter((line) => line.startsWith('patch '));
    expect(patches).toHaveLength(2);
    // The demo's observations are named in their element: every triple leaves and enters.
    for (const patch of patches) expect(patch).toMatch(/^patch [a-z0-9]+-\d+: -\d+ \+\d+ triples \(\d+ bytes\); store \d+ triples: p01=\d+ p02=\d+ p03=\d+$/);
  }, 60_000);
});

describe('examples/query.mjs', () => {
  it('prints the averages of each window as it closes, then exits', async () => {
    const finished = await run('pnpm', ['exec', 'tsx', 'examples/query.mjs', `${origin}/streams/parking`, '--window', 'ELEMENTS 2', '--results', '2']);
    expect(finished.stderr).toBe('');
    expect(finished.code).toBe(0);
    const lines = finished.stdout.trim().split('\n');
    const results = lines.filter((line) => line.startsWith('result '));
    expect(results).toHaveLength(2);
    for (const result of results) expect(result).toMatch(/^result [12] over 2 elements: latency \d+ ms, evaluated in \d+ ms$/);
    const rows = lines.filter((line) => line.startsWith('  '));
    expect(rows).toHaveLength(2 * FACILITIES);
    for (const row of rows) expect(row).toMatch(/^ {2}p0[1-3]: average \d+\.\d free spaces over 2 observations$/);
  }, 90_000);
});

describe("README.md's ingest example", () => {
  it('posts examples/observation.ttl with the documented curl line, and the element is published', async () => {
    const curl = documentedCommand('curl -X POST http://127.0.0.1:8080/streams/building-sensors').replace('127.0.0.1:8080', new URL(origin).host);
    expect(curl).toContain('--data-binary @examples/observation.ttl');
    const finished = await run('bash', ['-c', `${curl} -sS -w '\\n%{http_code}'`], { SMART_CITY_INGEST_TOKEN: TOKEN });
    expect(finished.stderr).toBe('');
    const [body, status] = finished.stdout.split('\n');
    expect(status).toBe('201');
    const answer = JSON.parse(body!) as { element: string; seq: number };
    expect(answer.seq).toBe(1);

    const latest = await fetch(`${origin}/streams/building-sensors/latest`, { headers: { accept: 'application/n-quads' } });
    const quads = await latest.text();
    expect(quads).toContain(`<${answer.element}>`);
    expect(quads).toContain('<https://example.org/buildings/b1/sensors/co2-1>');
    expect(quads).toContain('"612"^^<http://www.w3.org/2001/XMLSchema#integer>');
  });
});

describe("packages/publisher/README.md's ingest example", () => {
  it('posts the Turtle of its heredoc, and the element is published', async () => {
    const block = documentedLines(publisherReadme, 'curl -i -X POST http://127.0.0.1:8080/streams/sensors', 'EOF').replace(
      '127.0.0.1:8080',
      new URL(origin).host,
    );
    expect(block).toContain('--data-binary @- <<');
    const finished = await run('bash', ['-c', block], { SENSORS_TOKEN });
    expect(finished.stdout).toMatch(/^HTTP\/1\.1 201 Created\r$/m);
    const location = /^location: (\S+)\r$/im.exec(finished.stdout)?.[1];
    expect(location).toMatch(new RegExp(`^${origin}/streams/sensors/elements/[a-z0-9]+-1$`));

    const latest = await fetch(`${origin}/streams/sensors/latest`, { headers: { accept: 'application/n-quads' } });
    const quads = await latest.text();
    expect(quads).toContain(`<${location}>`);
    expect(quads).toContain('<https://example.org/p/co2>');
  });
});

describe('examples/browser.html', () => {
  let browser: Chromium;
  afterAll(async () => {
    await browser?.close();
  });

  it('opened as a file, imports the client from the publisher with no bundler and shows the stream updating', async () => {
    // What README.md says to do: open the file with the publisher running.
    expect(documentedCommand('xdg-open ')).toBe('xdg-open examples/browser.html');
    browser = await launchChromium();
    const { page, errors, requests } = await watchedPage(browser);
    const scripts: string[] = [];
    page.on('response', (response) => {
      if (response.request().resourceType() === 'script') scripts.push(`${response.status()} ${response.url()} ${response.headers()['content-type']}`);
    });
    const file = pathToFileURL(join(repositoryRoot, 'examples/browser.html'));
    file.searchParams.set('stream', `${origin}/streams/parking`);
    await page.goto(file.href);
    await waitForUpdates(page, 2);
    const rows = await page.locator('#observations tr').allTextContents();
    expect(rows).toHaveLength(FACILITIES);
    expect(rows[0]).toMatch(/^p01p01parkingNumberOfVacantSpaces\d+\d{4}-\d\d-\d\dT/);
    expect(await page.locator('#latency-ms').textContent()).toMatch(/^-?\d+\.\d$/);
    expect(await page.locator('#transport').textContent()).toBe('sse');
    // One script, the publisher's client, read across origins (the page's origin is the file's).
    expect(scripts).toEqual([`200 ${origin}${BROWSER_CLIENT_PATH} text/javascript; charset=utf-8`]);
    expect(requests.filter((url) => !url.startsWith(origin) && !url.startsWith('file:'))).toEqual([]);
    expect(errors).toEqual([]);
  }, 60_000);

  it('says in the page that the client could not be loaded when no publisher answers', async () => {
    browser ??= await launchChromium();
    const { page } = await watchedPage(browser);
    const file = pathToFileURL(join(repositoryRoot, 'examples/browser.html'));
    const port = await freePort();
    file.searchParams.set('stream', `http://127.0.0.1:${port}/streams/parking`);
    await page.goto(file.href);
    await page.waitForFunction(() => document.getElementById('status')?.textContent !== '');
    expect(await page.locator('#status').textContent()).toContain(`The client could not be loaded from http://127.0.0.1:${port}${BROWSER_CLIENT_PATH}: is the publisher running?`);
  }, 60_000);
});