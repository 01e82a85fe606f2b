// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * Layering. Folders follow the data flow; imports follow a dependency order: a folder imports
 * only the folders and files to its left, never to its right. Every folder and top-level file is
 * checked; `test/layering.test.ts` proves a backward import fails.
 *
 * Publisher: model (the vocabulary and element types every layer speaks) ← config ← source ←
 * render ← log (it stores rendered bytes) ← publish ← http ← composition (publisher.ts,
 * cluster.ts, server.ts, cli.ts, index.ts); errors.ts and clock-and-logger.ts are leaves any layer may use.
 * Client: transport ← decode ← latency ← subscribe.ts ← window ← query ← cli.ts, index.ts, live.ts;
 * element-id.ts is a leaf any layer may use.
 *
 * Packages: `@rdf-stream/protocol` (the facts of the HTTP protocol) imports nothing from outside
 * itself — no other package, no `node:` module, no dependency — so that every package, and
 * browsers, may use it.
 */
const packageLayers = {
  publisher: {
    order: ['model', 'config', 'source', 'render', 'log', 'publish', 'http'],
    composition: ['publisher', 'cluster', 'server', 'cli', 'index'],
  },
  client: {
    order: ['transport', 'decode', 'latency', 'subscribe', 'window', 'query'],
    composition: ['cli', 'index', 'live'],
  },
};
const packageNames = ['protocol', 'publisher', 'client', 'bench', 'dashboard'];

/** Another package is reached through its entry point (`@rdf-stream/…`), never its `src/`. */
const crossPackagePatterns = (own) =>
  packageNames
    .filter((other) => other !== own)
    .map((other) => ({ group: [`**/${other}/src/**`], message: `Import @rdf-stream/${other} through its entry point, not its src/.` }));

/** `../x/…`, `../../x/…` for a folder, `../x.js`, `../../x.js` for a top-level file. */
const relative = (name, folder) => (folder ? [`../${name}/**`, `../../${name}/**`] : [`../${name}.js`, `../../${name}.js`]);

function layeringBlocks(pkg, { order, composition }) {
  const blocks = [];
  order.forEach((layer, index) => {
    const later = order.slice(index + 1);
    // A layer that is a top-level file (client's subscribe.ts) is checked like a folder's files.
    const isFile = pkg === 'client' && layer === 'subscribe';
    const patterns = [
      ...later.map((other) => ({
        group: relative(other, !(pkg === 'client' && other === 'subscribe')).map((pattern) => (isFile ? pattern.replace(/^\.\.\//, './') : pattern)),
        message: `${layer} sits before ${other} in the dependency order (${order.join(' ← ')} ← composition): it may not import it.`,
      })),
      ...composition.map((file) => ({
        group: relative(file, false).map((pattern) => (isFile ? pattern.replace(/^\.\.\//, './') : pattern)),
        message: `${file}.ts composes the layers: no layer imports it.`,
      })),
      ...crossPackagePatterns(pkg),
    ];
    blocks.push({
      files: isFile ? [`packages/${pkg}/src/${layer}.ts`] : [`packages/${pkg}/src/${layer}/**/*.ts`],
      rules: { 'no-restricted-imports': ['error', { patterns }] },
    });
  });
  return blocks;
}

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/coverage/**', 'bench-results/**', 'packages/publisher/page-assets*/**', 'test-artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-imports': ['error', { patterns: crossPackagePatterns(undefined) }],
    },
  },
  // Each package's files: only its own src/, and other packages through their entry points.
  ...packageNames.map((pkg) => ({
    files: [`packages/${pkg}/**/*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns: crossPackagePatterns(pkg) }] },
  })),
  ...Object.entries(packageLayers).flatMap(([pkg, layers]) => layeringBlocks(pkg, layers)),
  {
    files: ['packages/protocol/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...crossPackagePatterns('protocol'),
            { regex: '^[^.]', message: '@rdf-stream/protocol imports nothing from outside itself (no package, no node: module), so that every package and browsers can use it.' },
          ],
        },
      ],
    },
  },
  {
    files: ['**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
