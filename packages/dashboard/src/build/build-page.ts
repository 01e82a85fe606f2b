import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { browserBundle } from './browser-bundle.js';
import { buildClientFile } from './build-client-file.js';
import { buildQueryWorker } from './build-query-worker.js';

/** The publisher serves the page from its own folder (packages/publisher/page-assets). */
export const defaultOutputDirectory = fileURLToPath(new URL('../../../publisher/page-assets/', import.meta.url));

const pageDirectory = fileURLToPath(new URL('../page/', import.meta.url));

export interface BuiltPage {
  readonly outputDirectory: string;
  /** Every file served, with its size and its brotli-compressed size in bytes. */
  readonly files: ReadonlyArray<{ readonly name: string; readonly bytes: number; readonly brotliBytes: number }>;
}

/**
 * Bundles the page (our client library, uPlot, and Comunica in the query worker: everything,
 * no CDN) into hashed, immutable file names, writes `index.html` naming them, and precompresses
 * every file once (`.br`, `.gz`) so that the publisher never compresses per request; adds the client's browser
 * file for pages of others (`buildClientFile`). Writes to a fresh folder,
 * then swaps it in, so a publisher starting meanwhile never reads half a build.
 */
export async function buildPage(outputDirectory: string = defaultOutputDirectory): Promise<BuiltPage> {
  const staging = `${outputDirectory.replace(/\/+$/, '')}.building-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const queryWorker = await buildQueryWorker(pageDirectory, staging);
  const result = await build({
    entryPoints: { page: join(pageDirectory, 'main.ts') },
    ...browserBundle,
    splitting: true,
    chunkNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    loader: { '.rq': 'text' },
    // The page starts its query worker by this name (`new URL(QUERY_WORKER_FILE, import.meta.url)`).
    define: { QUERY_WORKER_FILE: JSON.stringify(`./${queryWorker}`) },
    outdir: staging,
    logLevel: 'silent',
    legalComments: 'none',
  });
  const outputs = Object.entries(result.metafile.outputs);
  const entry = outputs.find(([, output]) => output.entryPoint !== undefined && output.entryPoint.endsWith('main.ts'));
  if (entry === undefined) throw new Error('esbuild wrote no entry script');
  const script = basename(entry[0]);
  const styles = entry[1].cssBundle === undefined ? undefined : basename(entry[1].cssBundle);
  const html = readFileSync(join(pageDirectory, 'index.html'), 'utf8')
    .replace('{{styles}}', styles === undefined ? '' : `<link rel="stylesheet" href="/page/${styles}">`)
    .replace('{{script}}', `<script type="module" src="/page/${script}"></script>`);
  writeFileSync(join(staging, 'index.html'), html);

  const files = [...outputs.map(([path]) => basename(path)), queryWorker, 'index.html'].map((name) => {
    const body = readFileSync(join(staging, name));
    const brotli = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } });
    writeFileSync(join(staging, `${name}.br`), brotli);
    writeFileSync(join(staging, `${name}.gz`), gzipSync(body, { level: 9 }));
    return { name, bytes: body.length, brotliBytes: brotli.length };
  });
  files.push(await buildClientFile(staging));

  mkdirSync(dirname(outputDirectory), { recursive: true });
  const previous = `${outputDirectory.replace(/\/+$/, '')}.previous-${process.pid}`;
  try {
    renameSync(outputDirectory, previous);
  } catch {
    // Nothing built before.
  }
  renameSync(staging, outputDirectory);
  rmSync(previous, { recursive: true, force: true });
  return { outputDirectory, files };
}
