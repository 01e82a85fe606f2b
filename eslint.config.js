// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Imports point downstream only: source → model → log → render → publish → http. */
const layers = ['config', 'source', 'model', 'log', 'render', 'publish', 'http'];
const downstreamOf = {
  model: ['source', 'log', 'render', 'publish', 'http', 'config'],
  log: ['source', 'render', 'publish', 'http', 'config'],
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
  {
    files: ['**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
