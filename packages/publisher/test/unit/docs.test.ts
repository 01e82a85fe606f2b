import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigSchema, flagAliases } from '../../src/config/config-schema.js';
import { errorCatalogue } from '../../src/errors.js';

const doc = (name: string) => readFileSync(new URL(`../../../../docs/${name}`, import.meta.url), 'utf8');
const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

describe('user documentation stays in step with the code', () => {
  it('docs/configuration.md documents every option', () => {
    const text = doc('configuration.md');
    for (const key of Object.keys(ConfigSchema.properties)) {
      const flag = Object.entries(flagAliases).find(([, k]) => k === key)?.[0] ?? kebab(key);
      expect(text, `--${flag}`).toContain(`\`--${flag}\``);
    }
  });

  it('docs/errors.md documents every error code with its status', () => {
    const text = doc('errors.md');
    for (const [code, { status }] of Object.entries(errorCatalogue)) {
      expect(text, code).toMatch(new RegExp(`\\| \`${code}\` \\| ${status}\\b`));
    }
  });
});
