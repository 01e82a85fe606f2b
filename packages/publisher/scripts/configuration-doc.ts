/**
 * Prints the option table of docs/configuration.md from the configuration schema, so that the
 * documentation cannot drift from the code: `tsx scripts/configuration-doc.ts`.
 */
import { ConfigSchema, defaults } from '../src/config/config-schema.js';
import { envName, flagOf } from '../src/config/load-config.js';

console.log('| flag | environment | default | meaning |');
console.log('|---|---|---|---|');
for (const [key, schema] of Object.entries(ConfigSchema.properties)) {
  const fallback = key in defaults ? String(defaults[key as keyof typeof defaults]) : '`http://HOST:PORT`';
  const { description = '', minimum, maximum } = schema as { description?: string; minimum?: number; maximum?: number };
  const range = minimum !== undefined && maximum !== undefined ? ` (${minimum}–${maximum})` : '';
  console.log(`| \`--${flagOf(key)}\` | \`${envName(key)}\` | ${fallback.startsWith('`') ? fallback : `\`${fallback}\``} | ${description}${range} |`);
}
