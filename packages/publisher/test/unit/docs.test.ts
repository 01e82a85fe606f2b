import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { exposedHeaders, formatNames, gapReasons, mediaTypeAliases, mediaTypes } from '@rdf-stream/protocol';
import { ConfigSchema } from '../../src/config/config-schema.js';
import { flagOf } from '../../src/config/load-config.js';
import { errorCatalogue } from '../../src/errors.js';

const doc = (name: string) => readFileSync(new URL(`../../../../docs/${name}`, import.meta.url), 'utf8');

describe('user documentation stays in step with the code', () => {
  it('docs/configuration.md documents every option', () => {
    const text = doc('configuration.md');
    for (const key of Object.keys(ConfigSchema.properties)) {
      expect(text, `--${flagOf(key)}`).toContain(`\`--${flagOf(key)}\``);
    }
  });

  it("docs/configuration.md's option tables are what scripts/configuration-doc.ts generates", () => {
    const generated = execFileSync(process.execPath, ['--import', 'tsx', 'scripts/configuration-doc.ts'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      encoding: 'utf8',
    });
    expect(doc('configuration.md')).toContain(generated.trimEnd());
  });

  it('docs/errors.md documents every error code with its status', () => {
    const text = doc('errors.md');
    for (const [code, { status }] of Object.entries(errorCatalogue)) {
      expect(text, code).toMatch(new RegExp(`\\| \`${code}\` \\| ${status}\\b`));
    }
  });

  it('docs/protocol.md states the facts of @rdf-stream/protocol: the headers exposed, the formats, the gap reasons', () => {
    const text = doc('protocol.md').replace(/\s+/g, ' ');
    expect(text).toContain(`exposes ${exposedHeaders.slice(0, -1).map((name) => `\`${name}\``).join(', ')} and \`${exposedHeaders.at(-1)}\` to scripts`);
    const aliasesOf = (format: string) =>
      Object.entries(mediaTypeAliases)
        .filter(([, aliased]) => aliased === format)
        .map(([mediaType]) => ` (also for \`${mediaType}\`)`)
        .join('');
    for (const format of formatNames) expect(text, format).toContain(`| \`${mediaTypes[format]}\`${aliasesOf(format)} | \`${format}\` |`);
    for (const reason of gapReasons) expect(text, reason).toContain(`| \`${reason}\` |`);
  });
});
