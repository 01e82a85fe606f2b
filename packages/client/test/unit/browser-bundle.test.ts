import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

const packageRoot = new URL('../..', import.meta.url).pathname;

/** Bundles `code` (which imports the package by its name, as a page does) for the browser, minified. */
async function bundle(code: string) {
  const result = await build({
    stdin: { contents: code, resolveDir: packageRoot, loader: 'js' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    minify: true,
    write: false,
    metafile: true,
    logLevel: 'silent',
    outfile: 'page.js',
  });
  expect(result.errors).toEqual([]);
  const [output] = Object.values(result.metafile.outputs);
  return { metafile: result.metafile, output: output!, text: result.outputFiles[0]!.text };
}

/** The modules reached from the entry by static imports only: what loads before any `import()`. */
function staticGraph(metafile: Metafile): string[] {
  const reached = new Set<string>();
  const pending = ['<stdin>'];
  while (pending.length > 0) {
    const path = pending.pop() as string;
    if (reached.has(path)) continue;
    reached.add(path);
    for (const imported of metafile.inputs[path]?.imports ?? []) {
      if (imported.kind !== 'dynamic-import' && !imported.external) pending.push(imported.path);
    }
  }
  return [...reached];
}

const comunica = (paths: readonly string[]) => paths.filter((path) => path.includes('@comunica/'));

describe('the browser bundle', () => {
  it('has nothing Node-only in it, and reaches the query engine by a dynamic import only', async () => {
    const { metafile, text } = await bundle(`export * from '@rdf-stream/client';`);
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.filter((input) => input.startsWith('node:') || /\/src\/cli\.ts$/.test(input))).toEqual([]);
    expect(text).not.toMatch(/\bfrom\s*["']node:|require\(["']node:/);
    // What a page needs is in it: the transports and the decoders; the query engine is loaded on first use.
    expect(inputs.some((input) => input.includes('eventsource-parser'))).toBe(true);
    // The WebSocket transport uses the browser's own WebSocket: the `ws` package (Node 20's) stays out.
    expect(inputs.some((input) => input.endsWith('/src/transport/open-web-socket.browser.ts'))).toBe(true);
    expect(inputs.filter((input) => /\/ws\/|\/src\/transport\/open-web-socket\.ts$/.test(input))).toEqual([]);
    expect(comunica(staticGraph(metafile))).toEqual([]);
    const lazy = inputs.flatMap((input) => metafile.inputs[input]!.imports.filter((imported) => imported.original === '@comunica/query-sparql-rdfjs'));
    expect(lazy.map((imported) => imported.kind)).toEqual(['dynamic-import']);
  }, 60_000);

  it('of a page that only subscribes holds no module of the query engine', async () => {
    const { metafile, output } = await bundle(`import { subscribe } from '@rdf-stream/client'; globalThis.subscribe = subscribe;`);
    expect(comunica(staticGraph(metafile))).toEqual([]);
    const inBundle = Object.entries(output.inputs).filter(([, input]) => input.bytesInOutput > 0).map(([path]) => path);
    expect(inBundle.some((path) => path.endsWith('/src/subscribe.ts'))).toBe(true);
    expect(comunica(inBundle)).toEqual([]);
  }, 60_000);
});
