import { basename, join } from 'node:path';
import { build } from 'esbuild';
import { browserBundle } from './browser-bundle.js';

/**
 * Bundles the page's query worker (`src/page/query-worker.ts`: the client library with Comunica)
 * into `outdir` as one module script with a hashed, immutable name, and resolves with that name
 * (`query-worker-{hash}.js`), which the page's own bundle is then built with. One file, no
 * chunks: the worker imports nothing at run time, and shares no chunk with the page, whose hash
 * would otherwise not cover the worker's.
 */
export async function buildQueryWorker(pageDirectory: string, outdir: string): Promise<string> {
  const result = await build({
    entryPoints: { 'query-worker': join(pageDirectory, 'query-worker.ts') },
    ...browserBundle,
    // A dependency of Comunica takes its globals from `window` when there is one, else from Node's
    // `global`: a worker has neither.
    define: { global: 'globalThis' },
    outdir,
    logLevel: 'silent',
    legalComments: 'none',
  });
  const file = Object.keys(result.metafile.outputs).find((path) => /query-worker-[^/]*\.js$/.test(path));
  if (file === undefined) throw new Error('esbuild wrote no query worker');
  return basename(file);
}
