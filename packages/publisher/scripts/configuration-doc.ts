/**
 * Prints the option table of docs/configuration.md from the configuration schema, so that the
 * documentation cannot drift from the code: `tsx scripts/configuration-doc.ts`.
 */
import { ConfigSchema, defaults, flagAliases } from '../src/config/config-schema.js';
import { ENV_PREFIX } from '../src/config/load-config.js';

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const flagOf = (key: string) => Object.entries(flagAliases).find(([, k]) => k === key)?.[0] ?? kebab(key);
const envOf = (key: string) => ENV_PREFIX + key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();

console.log('| flag | environment | default | meaning |');
console.log('|---|---|---|---|');
for (const [key, schema] of Object.entries(ConfigSchema.properties)) {
  const fallback = key in defaults ? String(defaults[key as keyof typeof defaults]) : '`http://HOST:PORT`';
  const { description = '', minimum, maximum } = schema as { description?: string; minimum?: number; maximum?: number };
  const range = minimum !== undefined && maximum !== undefined ? ` (${minimum}–${maximum})` : '';
  console.log(`| \`--${flagOf(key)}\` | \`${envOf(key)}\` | ${fallback.startsWith('`') ? fallback : `\`${fallback}\``} | ${description}${range} |`);
}
