import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts the module `moduleUrl` names (a `.ts` URL, as `import.meta.url` gives it when run from
 * the sources) in a worker thread. Run from the sources (tsx, vitest), the module is TypeScript
 * and is imported with tsx's `tsImport` (Node 20 applies no `--import` loader, nor
 * `module.register`, in workers); built, the `.js` file beside it is imported.
 */
export function startWorkerThread(moduleUrl: URL, options: Omit<WorkerOptions, 'eval'> = {}): Worker {
  const typescript = moduleUrl.href.endsWith('.ts');
  const entry = JSON.stringify(moduleUrl.href);
  const code = typescript
    ? `import(${JSON.stringify(tsxApiUrl())}).then(({ tsImport }) => tsImport(${entry}, ${entry}));`
    : `import(${entry});`;
  return new Worker(code, { ...options, eval: true });
}

/** The URL of the worker module `name` (without extension) beside `importMetaUrl`, `.ts` or `.js` as that is. */
export function workerModuleUrl(name: string, importMetaUrl: string): URL {
  return new URL(`./${name}.${importMetaUrl.endsWith('.ts') ? 'ts' : 'js'}`, importMetaUrl);
}

/** The ESM entry of `tsx/esm/api`, as its package's exports map names it. */
function tsxApiUrl(): string {
  const require = createRequire(import.meta.url);
  const manifestPath = require.resolve('tsx/package.json');
  const manifest = require(manifestPath) as { exports: Record<string, { import: { default: string } }> };
  const api = manifest.exports['./esm/api'];
  if (api === undefined) throw new Error('tsx has no ./esm/api export');
  return new URL(api.import.default, pathToFileURL(manifestPath)).href;
}
