/**
 * Prints the option tables of docs/configuration.md from the configuration schema, one per
 * `--help` heading, so that the documentation cannot drift from the code:
 * `tsx scripts/configuration-doc.ts`.
 */
import { ConfigSchema, defaults, optionGroups } from '../src/config/config-schema.js';
import { envName, flagOf } from '../src/config/load-config.js';

for (const [group, keys] of Object.entries(optionGroups)) {
  console.log(`### ${group}\n`);
  console.log('| flag | environment | default | meaning |');
  console.log('|---|---|---|---|');
  for (const key of keys) {
    const value = key in defaults ? String(defaults[key as keyof typeof defaults]) : 'http://HOST:PORT';
    const fallback = value === '' ? '(empty)' : `\`${value}\``;
    const { description = '', minimum, maximum, anyOf } = ConfigSchema.properties[key] as {
      description?: string;
      minimum?: number;
      maximum?: number;
      anyOf?: ReadonlyArray<{ const?: unknown }>;
    };
    const range = minimum !== undefined && maximum !== undefined ? ` (${minimum}–${maximum})` : '';
    const choices = anyOf === undefined ? '' : ` (one of ${anyOf.map((choice) => `\`${String(choice.const)}\``).join(', ')})`;
    console.log(`| \`--${flagOf(key)}\` | \`${envName(key)}\` | ${fallback} | ${description}${range}${choices} |`);
  }
  console.log('');
}
