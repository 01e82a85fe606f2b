import type { BuildOptions } from 'esbuild';

/**
 * What the page's script and its query worker are bundled with: one ES module each, minified,
 * for the browsers the page supports (a browser that runs the page starts its module worker),
 * with hashed, immutable names.
 */
export const browserBundle = {
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome120', 'firefox120', 'safari17'],
  minify: true,
  sourcemap: false,
  metafile: true,
  entryNames: '[name]-[hash]',
} as const satisfies BuildOptions;
