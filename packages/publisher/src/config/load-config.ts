import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { Value } from '@sinclair/typebox/value';
import { type Document, LineCounter, parseDocument } from 'yaml';
import { ConfigSchema, defaults, flagAliases, optionGroups, type PublisherConfig } from './config-schema.js';
import { schemaMessage } from './schema-message.js';
import { resolveStreams, type StreamConfig } from './stream-config.js';

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
  /** The keys whose value is the configuration file's (a flag or the environment did not override it). */
  const fromFile = new Set<string>();
  const merged: Record<string, unknown> = { ...defaults };

  const configFile = flags.config ?? env[`${ENV_PREFIX}CONFIG`];
  const file = typeof configFile === 'string' ? readConfigFile(resolve(cwd, configFile)) : undefined;
  if (file !== undefined) {
    for (const [key, value] of Object.entries(file.values)) {
      if (key === 'streams') continue;
      merged[key] = value;
      origin.set(key, file.describe(`/${key}`));
      fromFile.add(key);
    }
  }
  for (const key of keys) {
    const value = env[envName(key)];
    if (value !== undefined && value !== '') {
      merged[key] = value;
      origin.set(key, `environment variable ${envName(key)}`);
      fromFile.delete(key);
    }
  }
  for (const key of keys) {
    const value = flags[flagOf(key).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())];
    if (value !== undefined) {
      merged[key] = value;
      origin.set(key, `--${flagOf(key)}`);
      fromFile.delete(key);
    }
  }

  const converted = Value.Convert(ConfigSchema, merged) as Record<string, unknown>;
  const problems = [...Value.Errors(ConfigSchema, converted)].map((error) => {
    const key = error.path.replace(/^\//, '');
    const from = origin.get(key) ?? (key === '' ? 'configuration' : 'default');
    const { message, withValue } = schemaMessage(error);
    const shown = key === '' ? message : `${key} (from ${from}): ${message}`;
    return `  - ${shown}${key !== '' && !withValue ? `, got ${JSON.stringify(converted[key])}` : ''}`;
  });
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n${[...new Set(problems)].join('\n')}`);
  }
  const config = converted as Record<string, unknown>;
  config.streams = file !== undefined && Object.hasOwn(file.values, 'streams') ? fileStreams(file, config, env) : [demoStream(config)];
  if (Number(config.headersTimeoutMs) > Number(config.requestTimeoutMs)) {
    throw new ConfigError(
      `Invalid configuration:\n  - headersTimeoutMs (${String(config.headersTimeoutMs)}) must not exceed requestTimeoutMs (${String(config.requestTimeoutMs)})`,
    );
  }
  if (Number(config.workers) > 1) {
    const ingest = (config.streams as StreamConfig[]).find((stream) => stream.source.kind === 'ingest');
    if (ingest !== undefined) {
      throw new ConfigError(
        `Invalid configuration:\n  - workers: the ingest stream "${ingest.id}" needs workers = 1 (a POST reaches one worker; forwarding it to the primary is not implemented)`,
      );
    }
  }
  // A relative data directory is where the user typed the command, or the folder of the file that names it.
  config.dataDir = resolve(file !== undefined && fromFile.has('dataDir') ? dirname(file.path) : cwd, String(config.dataDir));
  config.baseUrlFollowsPort = config.baseUrl === undefined;
  config.baseUrl = String(config.baseUrl ?? derivedBaseUrl(String(config.host), Number(config.port))).replace(/\/+$/, '');
  return Object.freeze(config) as PublisherConfig;
}

/**
 * The configuration once the server listens on `port` (the one `--port 0` let the system pick):
 * unless a base URL was configured, the base URL names that port, so that every IRI and link the
 * publisher mints points where clients can connect.
 */
export function withListeningPort(config: PublisherConfig, port: number): PublisherConfig {
  if (port === config.port) return config;
  return Object.freeze({ ...config, port, ...(config.baseUrlFollowsPort === true ? { baseUrl: derivedBaseUrl(config.host, port) } : {}) });
}

const derivedBaseUrl = (host: string, port: number) => `http://${hostForUrl(host)}:${port}`;

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** A parsed configuration file, able to say where (line, column) a value is. */
interface ConfigFile {
  readonly path: string;
  readonly values: Record<string, unknown>;
  /** `file.yaml line 12 (/streams/2/source/url)`, or the file alone when the pointer is not in it. */
  describe(pointer: string): string;
}

/**
 * Reads a YAML or JSON configuration file (YAML is a superset of JSON, so one parser gives line
 * numbers for both). Aliases are bounded by the parser (`maxAliasCount`), keys must be unique.
 */
function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`Cannot read configuration file ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const lineCounter = new LineCounter();
  const document: Document = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  const syntax = document.errors[0];
  if (syntax !== undefined) {
    const position = lineCounter.linePos(syntax.pos[0]);
    const kind = /\.json$/i.test(path) ? 'JSON' : 'YAML';
    throw new ConfigError(
      `Configuration file ${path} is not valid ${kind}: line ${position.line}, column ${position.col}: ${syntax.message.split('\n')[0]}`,
    );
  }
  const values: unknown = document.toJS({ maxAliasCount: 100 });
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    throw new ConfigError(`Configuration file ${path} must hold a mapping (an object) of options`);
  }
  return {
    path,
    values: values as Record<string, unknown>,
    describe(pointer) {
      const segments = pointer
        .split('/')
        .slice(1)
        .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
      // The deepest node that exists: a missing property is reported where its parent is.
      for (let depth = segments.length; depth >= 0; depth--) {
        const node = document.getIn(segments.slice(0, depth), true) as { range?: [number, number, number] } | undefined;
        if (node?.range !== undefined) {
          const { line } = lineCounter.linePos(node.range[0]);
          return `${path} line ${line}`;
        }
      }
      return path;
    },
  };
}

/** The `streams` of a configuration file, validated, or a ConfigError naming every bad value's path and line. */
function fileStreams(file: ConfigFile, config: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>): StreamConfig[] {
  const { streams, problems } = resolveStreams(file.values.streams, {
    intervalSeconds: Number(config.intervalSeconds),
    retainedElements: Number(config.retainedElements),
    retainedSeconds: Number(config.retainedSeconds),
    resolvePath: (path) => resolve(dirname(file.path), path),
    unreadable,
    env,
  });
  if (problems.length > 0) {
    const lines = problems.map(
      ({ path, message, value }) =>
        `  - ${path.slice(1)} (${file.describe(path)}): ${message}${value === undefined ? '' : `, got ${JSON.stringify(value)}`}`,
    );
    throw new ConfigError(`Invalid configuration:\n${[...new Set(lines)].join('\n')}`);
  }
  return streams;
}

/** Why the file at `path` cannot be read, or undefined if it is a file. */
function unreadable(path: string): string | undefined {
  try {
    return statSync(path).isFile() ? undefined : 'is not a file';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? 'error'})`;
  }
}

/** Without a `streams` list, the publisher serves the demo stream described by the flat options. */
function demoStream(config: Record<string, unknown>): StreamConfig {
  return {
    id: String(config.streamId),
    title: String(config.streamTitle),
    intervalSeconds: Number(config.intervalSeconds),
    retainedElements: Number(config.retainedElements),
    retainedSeconds: Number(config.retainedSeconds),
    shape: { kind: 'bundled' },
    source: { kind: 'simulator', facilities: Number(config.facilities), seed: Number(config.seed) },
  };
}

/** The publisher's version, from its package.json (two folders up from both src/config and dist/config). */
const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function parseFlags(argv: readonly string[]): Record<string, string | undefined> {
  let helpText = '';
  const program = new Command('rdf-stream-publisher')
    .description('Publishes live RDF streams as cacheable documents, long-poll and Server-Sent Events.')
    .version(version, '--version', 'Print the version and exit')
    .helpOption('-h, --help', 'Print this help and exit')
    .exitOverride()
    .configureOutput({ writeOut: (text) => (helpText += text), writeErr: (text) => (helpText += text) })
    .allowExcessArguments(false)
    .addOption(new Option('--config <file>', `YAML or JSON configuration file (env ${ENV_PREFIX}CONFIG)`).helpGroup('Configuration:'));
  for (const [group, groupKeys] of Object.entries(optionGroups)) {
    for (const key of groupKeys) program.addOption(flagOption(key).helpGroup(`${group}:`));
  }
  program.addHelpText(
    'after',
    '\nPrecedence: flags > environment > configuration file > defaults. Exit status 2: a bad configuration. See docs/configuration.md.',
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

/** The flag of a configuration property, with its default, its environment variable and, for an enumeration, its choices. */
function flagOption(key: Key | 'baseUrl'): Option {
  const property = ConfigSchema.properties[key] as { description?: string; anyOf?: ReadonlyArray<{ const?: unknown }> };
  const fallback = key === 'baseUrl' ? undefined : defaults[key];
  const shownDefault = fallback === undefined ? '' : `default ${String(fallback)}, `;
  const option = new Option(`--${flagOf(key)} <value>`, `${property.description ?? key} (${shownDefault}env ${envName(key)})`);
  const choices = property.anyOf?.map((alternative) => alternative.const);
  if (choices !== undefined && choices.every((choice) => typeof choice === 'string')) {
    // Listed in --help; a bad value is refused by the schema, with the same message as from the environment or a file.
    option.choices(choices as string[]).argParser((value) => value);
  }
  return option;
}
