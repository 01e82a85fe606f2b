// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * Imports point downstream only: source → model → render → log → publish → http. The log stores
 * elements as rendered (render once, persist the bytes), so it sits after render.
 */
const layers = ['config', 'source', 'model', 'render', 'log', 'publish', 'http'];
const downstreamOf = {
  model: ['source', 'log', 'render', 'publish', 'http', 'config'],
  log: ['source', 'publish', 'http', 'config'],
  render: ['source', 'log', 'publish', 'http', 'config'],
  source: ['log', 'render', 'publish', 'http', 'config'],
  publish: ['http'],
};

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/coverage/**', 'bench-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/src/**', '!./**', '!../**'], message: 'Import another package through its entry point, not its src/.' }] }],
    },
  },
  ...Object.entries(downstreamOf).map(([layer, forbidden]) => ({
    files: [`packages/publisher/src/${layer}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: forbidden.map((other) => ({
            group: [`../${other}/*`, `../../${other}/*`],
            message: `${layer}/ sits upstream of ${other}/ (data flows ${layers.join(' → ')}).`,
          })),
        },
      ],
    },
  })),
  // Client: transport → decode → latency → window → query.
  ...Object.entries({
    transport: ['decode', 'latency', 'window', 'query'],
    decode: ['latency', 'window', 'query'],
    latency: ['window', 'query'],
    window: ['query'],
  }).map(([layer, forbidden]) => ({
    files: [`packages/client/src/${layer}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: forbidden.map((other) => ({
            group: [`../${other}/*`],
            message: `${layer}/ sits upstream of ${other}/ (transport → decode → latency → window → query).`,
          })),
        },
      ],
    },
  })),
  {
    files: ['**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
