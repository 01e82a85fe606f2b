import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { STREAM_ID } from '@rdf-stream/protocol';
import { ABSOLUTE_IRI } from '../model/vocabulary.js';
import { schemaMessage } from './schema-message.js';

/** How the fields of a JSON or CSV record become an observation (see docs/configuration.md#mappings). */
export const MappingSchema = Type.Object(
  {
    records: Type.Optional(Type.String({ minLength: 1, description: 'Dot path to the array of records in a JSON document' })),
    sensor: Type.String({ minLength: 1, description: 'IRI template of the sensor, e.g. https://example.org/sensors/{id}' }),
    observedProperty: Type.String({ minLength: 1, description: 'IRI template of the observed property' }),
    featureOfInterest: Type.String({ minLength: 1, description: 'IRI template of the feature of interest' }),
    result: Type.String({ pattern: '^\\{[^{}]+\\}$', description: 'The field holding the result, as "{field}"' }),
    resultTime: Type.Optional(Type.String({ pattern: '^\\{[^{}]+\\}$', description: 'The field holding the result time, as "{field}"' })),
    unit: Type.Optional(Type.String({ minLength: 1, description: 'IRI template of a QUDT unit' })),
    id: Type.Optional(Type.String({ minLength: 1, description: 'Template of the observation id within the element' })),
  },
  { additionalProperties: false },
);

/** The name of an environment variable that holds a secret (never the secret itself). */
const envVariable = Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' });

const SimulatorSource = Type.Object(
  {
    kind: Type.Literal('simulator'),
    facilities: Type.Integer({ minimum: 1, maximum: 10_000, default: 13, description: 'Facilities (one observation each)' }),
    seed: Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1, default: 1, description: 'Seed of the random walk' }),
  },
  { additionalProperties: false },
);

const rdfFileFormat = Type.Union([Type.Literal('trig'), Type.Literal('nquads'), Type.Literal('turtle'), Type.Literal('ntriples')]);

const ReplaySource = Type.Object(
  {
    kind: Type.Literal('replay'),
    file: Type.String({ minLength: 1, description: 'Recording (TriG, N-Quads, Turtle, N-Triples), relative to the configuration file' }),
    format: Type.Optional(rdfFileFormat),
    speed: Type.Number({ exclusiveMinimum: 0, maximum: 10_000, default: 1, description: 'Replay speed factor (2: twice as fast)' }),
    loop: Type.Boolean({ default: true, description: 'Start again after the last element' }),
  },
  { additionalProperties: false },
);

const WebApiSource = Type.Object(
  {
    kind: Type.Literal('web-api'),
    url: Type.String({ pattern: '^https?://[^\\s]+$', description: 'The JSON or CSV resource to poll' }),
    format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')])),
    pollSeconds: Type.Number({ minimum: 0.05, maximum: 86_400, default: 30, description: 'Seconds between two requests' }),
    timeoutMs: Type.Integer({ minimum: 10, maximum: 600_000, default: 10_000, description: 'Timeout of one request' }),
    headers: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z0-9-]+$' }), Type.String())),
    headersFromEnv: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z0-9-]+$' }), envVariable, {
        description: 'Request headers whose values (API keys) are read from environment variables',
      }),
    ),
    mapping: MappingSchema,
    identity: Type.Union([Type.Literal('element'), Type.Literal('state')], {
      default: 'element',
      description:
        'element: observations are events named in their element; state: the resource is the current state of things, each named the same in every element (needs mapping.id)',
    }),
  },
  { additionalProperties: false },
);

const MqttSource = Type.Object(
  {
    kind: Type.Literal('mqtt'),
    url: Type.String({ pattern: '^mqtts?://[^\\s]+$', description: 'Broker URL, e.g. mqtt://127.0.0.1:1883' }),
    topics: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 100 }),
    payload: Type.Union([Type.Literal('json'), Type.Literal('rdf')], { default: 'json' }),
    rdfFormat: Type.Optional(rdfFileFormat),
    mapping: Type.Optional(MappingSchema),
    qos: Type.Union([Type.Literal(0), Type.Literal(1)], { default: 1 }),
    username: Type.Optional(Type.String({ minLength: 1 })),
    passwordEnv: Type.Optional(envVariable),
  },
  { additionalProperties: false },
);

const IngestSource = Type.Object(
  {
    kind: Type.Literal('ingest'),
    tokenEnv: Type.String({
      pattern: envVariable.pattern,
      description: 'Name of the environment variable holding the bearer token',
    }),
  },
  { additionalProperties: false },
);

const sourceSchemas = {
  simulator: SimulatorSource,
  replay: ReplaySource,
  'web-api': WebApiSource,
  mqtt: MqttSource,
  ingest: IngestSource,
} as const satisfies Record<string, TSchema>;

export type SourceKind = keyof typeof sourceSchemas;
export const sourceKinds = Object.keys(sourceSchemas) as SourceKind[];

export const StreamSchema = Type.Object(
  {
    id: Type.String({ pattern: STREAM_ID.source, description: 'Stream id: /streams/{id}' }),
    title: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 2_000 })),
    license: Type.Optional(Type.String({ pattern: ABSOLUTE_IRI.source, description: 'IRI of the licence' })),
    intervalSeconds: Type.Optional(
      Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 86_400 }), Type.Literal('irregular')], {
        description: 'Expected seconds between elements, or "irregular"',
      }),
    ),
    retainedElements: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
    retainedSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 3_153_600_000 })),
    shape: Type.Optional(Type.String({ minLength: 1, description: 'SHACL shapes file for ingested elements, or "none"' })),
    source: Type.Object({ kind: Type.String() }),
  },
  { additionalProperties: false },
);

export type SourceConfig =
  | Static<typeof SimulatorSource>
  | Static<typeof ReplaySource>
  | (Static<typeof WebApiSource> & { readonly secretHeaders?: Readonly<Record<string, string>> })
  | (Static<typeof MqttSource> & { readonly password?: string })
  | (Static<typeof IngestSource> & { readonly token: string });

export type ShapeChoice = { readonly kind: 'bundled' } | { readonly kind: 'file'; readonly path: string } | { readonly kind: 'none' };

/** One stream of the configuration, validated, with defaults applied and paths resolved. */
export interface StreamConfig {
  readonly id: string;
  readonly title: string;
  readonly description?: string;
  readonly license?: string;
  /** Expected seconds between elements; null for an irregular stream; undefined: as the source says. */
  readonly intervalSeconds?: number | null;
  readonly retainedElements: number;
  /** Whole pages whose newest element is older than this are removed (seconds; 0: no age limit). */
  readonly retainedSeconds: number;
  /** SHACL shapes that ingested elements must satisfy: the bundled ones, a file's, or none. */
  readonly shape: ShapeChoice;
  readonly source: SourceConfig;
}

export interface StreamProblem {
  /** JSON pointer of the bad value, e.g. `/streams/2/source/url`. */
  readonly path: string;
  readonly message: string;
  readonly value?: unknown;
}

export interface StreamDefaults {
  readonly intervalSeconds: number;
  readonly retainedElements: number;
  readonly retainedSeconds: number;
  /** Resolves a path written in the configuration file (relative to the file's folder). */
  readonly resolvePath: (path: string) => string;
  /** Why the file at a resolved path cannot be read (`does not exist`, `is a directory`), or undefined if it can. */
  readonly unreadable: (path: string) => string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
}

function schemaProblems(schema: TSchema, value: unknown, at: string): StreamProblem[] {
  return [...Value.Errors(schema, value)].map((error) => {
    const { message, withValue } = schemaMessage(error);
    return { path: `${at}${error.path}`, message, ...(withValue ? {} : { value: error.value }) };
  });
}

/**
 * Validates the `streams` of a configuration file, one by one, so that every problem names the
 * exact path of its value (a union schema would only say "expected union value").
 */
export function resolveStreams(raw: unknown, defaults: StreamDefaults): { streams: StreamConfig[]; problems: StreamProblem[] } {
  const problems: StreamProblem[] = [];
  const streams: StreamConfig[] = [];
  if (!Array.isArray(raw)) return { streams, problems: [{ path: '/streams', message: 'Expected an array of streams', value: raw }] };
  if (raw.length === 0) problems.push({ path: '/streams', message: 'Declare at least one stream' });
  const seen = new Map<string, number>();
  raw.forEach((candidate: unknown, index) => {
    const at = `/streams/${index}`;
    const found = schemaProblems(StreamSchema, candidate, at);
    if (found.length > 0) {
      problems.push(...found);
      return;
    }
    const stream = candidate as Static<typeof StreamSchema>;
    const previous = seen.get(stream.id);
    if (previous !== undefined) {
      problems.push({ path: `${at}/id`, message: `Duplicate stream id (also /streams/${previous}/id)`, value: stream.id });
    }
    seen.set(stream.id, index);
    const kind = stream.source.kind as SourceKind;
    if (!Object.hasOwn(sourceSchemas, kind)) {
      problems.push({ path: `${at}/source/kind`, message: `Expected one of ${sourceKinds.join(', ')}`, value: stream.source.kind });
      return;
    }
    const sourceSchema = sourceSchemas[kind];
    const source = Value.Default(sourceSchema, structuredClone(stream.source)) as Static<typeof sourceSchema>;
    const sourceProblems = schemaProblems(sourceSchema, source, `${at}/source`);
    if (sourceProblems.length > 0) {
      problems.push(...sourceProblems);
      return;
    }
    const resolved = resolveSource(source as SourceConfig, stream.id, `${at}/source`, defaults, problems);
    const namesShapeFile = stream.shape !== undefined && stream.shape !== 'none';
    const shape = namesShapeFile ? existingFile(stream.shape as string, `${at}/shape`, `stream "${stream.id}": its shapes file`, defaults, problems) : undefined;
    if (resolved === undefined || (namesShapeFile && shape === undefined)) return;
    if (kind === 'simulator' && stream.intervalSeconds === 'irregular') {
      problems.push({ path: `${at}/intervalSeconds`, message: 'A simulator needs a number of seconds', value: 'irregular' });
      return;
    }
    const interval =
      stream.intervalSeconds === 'irregular'
        ? null
        : (stream.intervalSeconds ?? (kind === 'simulator' ? defaults.intervalSeconds : undefined));
    streams.push({
      id: stream.id,
      title: stream.title,
      ...(interval === undefined ? {} : { intervalSeconds: interval }),
      ...(stream.description === undefined ? {} : { description: stream.description }),
      ...(stream.license === undefined ? {} : { license: stream.license }),
      retainedElements: stream.retainedElements ?? defaults.retainedElements,
      retainedSeconds: stream.retainedSeconds ?? defaults.retainedSeconds,
      shape:
        stream.shape === 'none'
          ? { kind: 'none' }
          : shape === undefined
            ? { kind: 'bundled' }
            : { kind: 'file', path: shape },
      source: resolved,
    });
  });
  return { streams, problems };
}

/**
 * The resolved path of a file the stream needs, or a problem at `path` naming the resolved path:
 * a missing file is a configuration error, found before any stream's log is opened.
 */
function existingFile(
  written: string,
  path: string,
  what: string,
  defaults: StreamDefaults,
  problems: StreamProblem[],
): string | undefined {
  const resolved = defaults.resolvePath(written);
  const reason = defaults.unreadable(resolved);
  if (reason === undefined) return resolved;
  problems.push({ path, message: `${what} ${resolved} ${reason}` });
  return undefined;
}

/** The value of the environment variable `name`, or a problem at `path` if it is unset or too short. */
function secret(
  env: StreamDefaults['env'],
  name: string,
  path: string,
  minLength: number,
  problems: StreamProblem[],
  what = 'a value',
): string | undefined {
  const value = env[name];
  if (value === undefined || value.length < minLength) {
    problems.push({
      path,
      message: `Environment variable ${name} must hold ${what}${minLength > 1 ? ` (at least ${minLength} characters)` : ''}`,
      ...(value === undefined ? {} : { value: '(too short)' }),
    });
    return undefined;
  }
  return value;
}

/** A copy of `source` with a secret that is not enumerable: it never appears when the configuration is logged or serialised. */
function withSecret<T extends object>(source: T, key: string, value: unknown): T {
  const copy = { ...source };
  Object.defineProperty(copy, key, { value, enumerable: false });
  return copy;
}

function resolveSource(
  source: SourceConfig,
  streamId: string,
  at: string,
  defaults: StreamDefaults,
  problems: StreamProblem[],
): SourceConfig | undefined {
  switch (source.kind) {
    case 'replay': {
      const file = existingFile(source.file, `${at}/file`, `stream "${streamId}": its recording`, defaults, problems);
      return file === undefined ? undefined : { ...source, file };
    }
    case 'mqtt': {
      if (source.payload === 'json' && source.mapping === undefined) {
        problems.push({ path: `${at}/mapping`, message: 'JSON payloads need a mapping' });
        return undefined;
      }
      if (source.passwordEnv === undefined) return source;
      const password = secret(defaults.env, source.passwordEnv, `${at}/passwordEnv`, 1, problems);
      return password === undefined ? undefined : withSecret(source, 'password', password);
    }
    case 'web-api': {
      if (source.identity === 'state' && source.mapping.id === undefined) {
        problems.push({ path: `${at}/mapping/id`, message: 'identity "state" needs an id template naming each thing (e.g. "{id}")' });
        return undefined;
      }
      const secretHeaders: Record<string, string> = {};
      for (const [header, variable] of Object.entries(source.headersFromEnv ?? {})) {
        const value = secret(defaults.env, variable, `${at}/headersFromEnv/${header}`, 1, problems);
        if (value === undefined) return undefined;
        secretHeaders[header] = value;
      }
      return withSecret(source, 'secretHeaders', secretHeaders);
    }
    case 'ingest': {
      const token = secret(defaults.env, source.tokenEnv, `${at}/tokenEnv`, 16, problems, "the stream's bearer token");
      return token === undefined ? undefined : withSecret(source, 'token', token);
    }
    default:
      return source;
  }
}
