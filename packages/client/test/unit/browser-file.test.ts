import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_FILE_NAME, type BrowserFile, bundleBrowserFile, writePackageBrowserFile } from '../../scripts/build-browser-file.js';

/** scripts/build-browser-file.ts: the prebuilt ES module of `@rdf-stream/client/live` for pages without a bundler. */
let directory: string;
let built: BrowserFile;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'client-browser-file-'));
  built = await writePackageBrowserFile(directory);
}, 60_000);

/** An entry of the test's own, in a folder with only the npm packages given (name → package.json and index.js). */
function entry(code: string, packages: Readonly<Record<string, { manifest: object; index: string }>> = {}): string {
  const folder = mkdtempSync(join(tmpdir(), 'client-browser-entry-'));
  for (const [name, { manifest, index }] of Object.entries(packages)) {
    mkdirSync(join(folder, 'node_modules', name), { recursive: true });
    writeFileSync(join(folder, 'node_modules', name, 'package.json'), JSON.stringify({ name, version: '1.0.0', main: 'index.js', ...manifest }));
    writeFileSync(join(folder, 'node_modules', name, 'index.js'), index);
  }
  const path = join(folder, 'entry.js');
  writeFileSync(path, code);
  return path;
}

describe('the browser file', () => {
  it('is one self-contained, minified ES module with the browser WebSocket, exporting the light entry', async () => {
    const text = readFileSync(join(directory, BROWSER_FILE_NAME), 'utf8');
    expect(text.length).toBe(built.bytes);
    // Nothing left for the browser to resolve: no import statement, and no require of a module
    // esbuild left out (its stand-in throws "Dynamic require of … is not supported").
    expect(text).not.toMatch(/(?:^|[;}])import\s*(?:[{*\w$][^;]*?from\s*)?["']/);
    expect(text).not.toContain('Dynamic require of');
    // The browser's WebSocket (`#open-web-socket` under the browser condition), not the ws package.
    expect(text).toContain('this platform has no WebSocket');
    expect(text).not.toContain('ws does not work in the browser');
    // Minified: its own functions renamed, exported under their names.
    expect(text).not.toMatch(/function subscribe\(/);
    const exported = (await import(pathToFileURL(join(directory, BROWSER_FILE_NAME)).href)) as Record<string, unknown>;
    expect(Object.keys(exported).sort()).toEqual(['LatencyRecorder', 'measureClockOffset', 'observationsOf', 'subscribe']);
    expect(readFileSync(join(directory, 'rdf-stream-live.d.ts'), 'utf8')).toBe("export * from '../live.js';\n");
  });

  it('comes with its gzip and brotli encodings, smaller and decoding to it', () => {
    expect(built.gzip.length).toBeLessThan(built.bytes / 2);
    expect(built.brotli.length).toBeLessThan(built.gzip.length);
    expect(Buffer.compare(gunzipSync(built.gzip), built.contents)).toBe(0);
    expect(Buffer.compare(brotliDecompressSync(built.brotli), built.contents)).toBe(0);
  });

  it("is the size the README states, within 5 % (update the README when the file grows or shrinks)", () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const stated = /\*\*([\d.]+) kB, ([\d.]+) kB gzip, ([\d.]+) kB\s+brotli\*\*/.exec(readme);
    expect(stated, 'no "**… kB, … kB gzip, … kB brotli**" in the README').not.toBeNull();
    const [raw, gzip, brotli] = stated!.slice(1).map((kB) => Number(kB) * 1000);
    expect(Math.abs(built.bytes - raw!) / raw!).toBeLessThan(0.05);
    expect(Math.abs(built.gzip.length - gzip!) / gzip!).toBeLessThan(0.05);
    expect(Math.abs(built.brotli.length - brotli!) / brotli!).toBeLessThan(0.05);
  });

  it('is the same file from build to build, so that the package and the publisher serve the same bytes', async () => {
    expect(Buffer.compare((await bundleBrowserFile()).contents, built.contents)).toBe(0);
  }, 60_000);

  it('keeps what a browser replacement stands for: an npm package of a built-in\'s name, a module a browser field maps to nothing', async () => {
    const path = entry("import { EventEmitter } from 'events'; import dep from 'dep'; export const both = [EventEmitter, dep];", {
      events: { manifest: {}, index: "exports.EventEmitter = function () { return 'events from npm'; };" },
      dep: { manifest: { browser: { fs: false } }, index: "const fs = require('fs'); module.exports = () => typeof fs.readFileSync;" },
    });
    const text = Buffer.from((await bundleBrowserFile(path)).contents).toString();
    expect(text).toContain('events from npm');
    expect(text).not.toContain('Dynamic require of');
  });

  it.each([
    ['a node: module', "import { readFileSync } from 'node:fs'; export const read = readFileSync;", '"node:fs" is a Node built-in module'],
    ['a bare Node built-in', "import { createHash } from 'crypto'; export const hash = createHash;", '"crypto" is a Node built-in module'],
    ['a built-in by require', "export const path = require('path');", '"path" is a Node built-in module'],
    ['a built-in subpath', "import { readFile } from 'fs/promises'; export const read = readFile;", '"fs/promises" is a Node built-in module'],
  ])('fails the build on %s, naming it and its importer', async (_case, code, message) => {
    const path = entry(code);
    await expect(bundleBrowserFile(path)).rejects.toThrow(message);
    await expect(bundleBrowserFile(path)).rejects.toThrow(`imported by ${path}`);
  });
});
