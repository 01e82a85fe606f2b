/**
 * The prebuilt browser file of the light entry (`src/live.ts`): one minified ES module, with
 * every dependency in it, that a page imports without a bundler
 * (`import { subscribe } from '…/rdf-stream-live.js'`). The package ships it in
 * `dist/browser/` (`@rdf-stream/client/browser`, and CDNs serve it); the publisher serves the
 * same build at `/client/rdf-stream-live.js` (packages/dashboard's build bundles it with this
 * function).
 *
 * Run as a script (`pnpm build`, prepack), it writes `dist/browser/rdf-stream-live.js` and its
 * declarations, and prints its size: raw, gzip and brotli.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { BROWSER_CLIENT_PATH } from '@rdf-stream/protocol';
import { build, type Plugin } from 'esbuild';

/** `rdf-stream-live.js`: the name the publisher serves it under too. */
export const BROWSER_FILE_NAME = BROWSER_CLIENT_PATH.slice(BROWSER_CLIENT_PATH.lastIndexOf('/') + 1);

/** What the browser file bundles: the light entry, with the `browser` variant of `#open-web-socket`. */
export const liveEntry = fileURLToPath(new URL('../src/live.ts', import.meta.url));

/** Where the package keeps it (`files`: dist). */
export const packageBrowserDirectory = fileURLToPath(new URL('../dist/browser/', import.meta.url));

/** Browsers with ES modules, import maps and everything the client calls (fetch streams, WebSocket, EventTarget). */
export const BROWSER_TARGETS = ['chrome111', 'edge111', 'firefox111', 'safari16.4'];

/** `fs`, `node:fs`, `fs/promises`, …: every name that means a Node built-in module. */
const nodeBuiltin = new RegExp(`^(?:node:.+|(?:${builtinModules.map((name) => name.replace(/[/]/g, '\\/')).join('|')})(?:\\/.*)?)$`);

/**
 * Fails the build on a Node built-in that would reach the browser file. A dependency may still
 * name one when a browser replacement is at hand — an npm package of the same name (`buffer`,
 * `events`), or its `browser` field mapping the module to nothing (an empty module) — and esbuild
 * bundles that. Anything else — `node:` modules, built-ins with no replacement — is an error
 * naming the module and who imports it, rather than a file that throws in the page.
 */
export const noNodeBuiltins: Plugin = {
  name: 'no-node-builtins',
  setup(builder) {
    builder.onResolve({ filter: nodeBuiltin }, async (args) => {
      if (args.pluginData === noNodeBuiltins) return undefined;
      if (!args.path.startsWith('node:')) {
        const resolved = await builder.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: noNodeBuiltins });
        // Resolved to a replacement: esbuild's own resolution, which this defers to, bundles it.
        if (resolved.errors.length === 0 && !resolved.external) return undefined;
      }
      return {
        errors: [{ text: `"${args.path}" is a Node built-in module (imported by ${args.importer}): the browser file must not need Node` }],
      };
    });
  },
};

export interface BrowserFile {
  readonly contents: Uint8Array;
  readonly bytes: number;
  readonly gzip: Uint8Array;
  readonly brotli: Uint8Array;
}

/**
 * Bundles `entryPoint` (the light entry by default) for browsers: ES module, minified, no source
 * map (it would point at sources the package does not ship), self-contained (a file that still
 * imports anything is refused). Rejects with esbuild's errors, among them any Node built-in.
 */
export async function bundleBrowserFile(entryPoint: string = liveEntry): Promise<BrowserFile> {
  const result = await build({
    entryPoints: [entryPoint],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: BROWSER_TARGETS,
    minify: true,
    sourcemap: false,
    legalComments: 'eof',
    write: false,
    metafile: true,
    outfile: BROWSER_FILE_NAME,
    logLevel: 'silent',
    plugins: [noNodeBuiltins],
  });
  const [output] = Object.values(result.metafile.outputs);
  const imports = output?.imports.map((imported) => imported.path) ?? [];
  if (imports.length > 0) throw new Error(`the browser file would still import ${imports.join(', ')}: it must be self-contained`);
  const contents = result.outputFiles[0]!.contents;
  return {
    contents,
    bytes: contents.length,
    gzip: gzipSync(contents, { level: 9 }),
    brotli: brotliCompressSync(contents, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: contents.length },
    }),
  };
}

/** Its declarations: the light entry's, which the package compiles into dist/ beside it. */
const declarations = "export * from '../live.js';\n";

/** `12.3 kB`: the size as the client's README states it (kilobytes of 1000 bytes, as npm and bundlers print). */
export const kilobytes = (bytes: number): string => `${(bytes / 1000).toFixed(1)} kB`;

/** Writes the package's browser file and its declarations into `directory`; resolves with the file. */
export async function writePackageBrowserFile(directory: string = packageBrowserDirectory): Promise<BrowserFile> {
  const file = await bundleBrowserFile();
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, BROWSER_FILE_NAME), file.contents);
  writeFileSync(join(directory, BROWSER_FILE_NAME.replace(/\.js$/, '.d.ts')), declarations);
  return file;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = await writePackageBrowserFile();
  console.log(
    `browser file ${join(packageBrowserDirectory, BROWSER_FILE_NAME)}: ${kilobytes(file.bytes)}, ${kilobytes(file.gzip.length)} gzip, ${kilobytes(file.brotli.length)} brotli`,
  );
}
