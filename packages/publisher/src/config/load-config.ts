import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { Value } from '@sinclair/typebox/value';
import { ConfigSchema, defaults, flagAliases, type PublisherConfig } from './config-schema.js';

export const ENV_PREFIX = 'RDF_STREAM_';

/** A configuration that cannot be used; `message` says which value, where it came from and why. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** `--help` or `--version` was asked for: print `output` and exit 0. */
export class ConfigHelp extends Error {
  override readonly name = 'ConfigHelp';
  constructor(readonly output: string) {
    super('help requested');
  }
}

export interface ConfigSources {
  argv?: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
}

type Key = keyof typeof defaults;
const keys = Object.keys(ConfigSchema.properties) as Array<Key | 'baseUrl'>;

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** The environment variable of a configuration property: `RDF_STREAM_` + UPPER_SNAKE_CASE. */
export const envName = (key: string) => ENV_PREFIX + key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();

/** The CLI flag (without `--`) of a configuration property: kebab-case, or its alias. */
export const flagOf = (key: string) => Object.entries(flagAliases).find(([, k]) => k === key)?.[0] ?? kebab(key);

/**
 * Builds the configuration from defaults < JSON file (`--config`) < environment < CLI flags,
 * validates it against `ConfigSchema` and freezes it. Throws `ConfigError` with a message
 * naming the bad value and its origin, or `ConfigHelp` for `--help`.
 */
export function loadConfig(sources: ConfigSources = {}): PublisherConfig {
  const { argv = [], env = {}, cwd = process.cwd() } = sources;
  const flags = parseFlags(argv);
  const origin = new Map<string, string>();
  const merged: Record<string, unknown> = { ...defaults };

  const configFile = flags.config ?? env[`${ENV_PREFIX}CONFIG`];
  if (typeof configFile === 'string') {
    for (const [key, value] of Object.entries(readConfigFile(resolve(cwd, configFile)))) {
      merged[key] = value;
      origin.set(key, `${configFile}`);
    }
  }
  for (const key of keys) {
    const value = env[envName(key)];
    if (value !== undefined && value !== '') {
      merged[key] = value;
      origin.set(key, `environment variable ${envName(key)}`);
    }
  }
  for (const key of keys) {
    const value = flags[flagOf(key).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())];
    if (value !== undefined) {
      merged[key] = value;
      origin.set(key, `--${flagOf(key)}`);
    }
  }

  const converted = Value.Convert(ConfigSchema, merged) as Record<string, unknown>;
  const problems = [...Value.Errors(ConfigSchema, converted)].map((error) => {
    const key = error.path.replace(/^\//, '');
    const from = origin.get(key) ?? (key === '' ? 'configuration' : 'default');
    const shown = key === '' ? error.message : `${key} (from ${from}): ${error.message}`;
    return `  - ${shown}${key !== '' ? `, got ${JSON.stringify(converted[key])}` : ''}`;
  });
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n${[...new Set(problems)].join('\n')}`);
  }
  const config = converted as Record<string, unknown>;
  config.baseUrl = String(config.baseUrl ?? `http://${hostForUrl(String(config.host))}:${String(config.port)}`).replace(
    /\/+$/,
    '',
  );
  return Object.freeze(config) as PublisherConfig;
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`Cannot read configuration file ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`Configuration file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`Configuration file ${path} must hold a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

function parseFlags(argv: readonly string[]): Record<string, string | undefined> {
  let helpText = '';
  const program = new Command('rdf-stream-publisher')
    .description('Publishes live RDF streams as cacheable documents, long-poll and Server-Sent Events.')
    .exitOverride()
    .configureOutput({ writeOut: (text) => (helpText += text), writeErr: (text) => (helpText += text) })
    .allowExcessArguments(false)
    .addOption(new Option('--config <file>', `JSON configuration file (env ${ENV_PREFIX}CONFIG)`));
  for (const key of keys) {
    const property = ConfigSchema.properties[key] as { description?: string };
    const fallback = key === 'baseUrl' ? undefined : defaults[key];
    const shownDefault = fallback === undefined ? '' : `default ${String(fallback)}, `;
    program.addOption(new Option(`--${flagOf(key)} <value>`, `${property.description ?? key} (${shownDefault}env ${envName(key)})`));
  }
  program.addHelpText(
    'after',
    '\nPrecedence: flags > environment > configuration file > defaults. See docs/configuration.md.',
  );
  try {
    program.parse([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') {
        throw new ConfigHelp(helpText);
      }
      throw new ConfigError(helpText.trim() || error.message);
    }
    throw error;
  }
  return program.opts<Record<string, string | undefined>>();
}
