import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/load-config.js';

const dir = mkdtempSync(join(tmpdir(), 'streams-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOKEN = 'a-token-of-at-least-16-characters';

function load(name: string, text: string, env: Record<string, string> = {}, argv: string[] = []) {
  writeFileSync(join(dir, name), text);
  return loadConfig({ argv: ['--config', name, ...argv], env, cwd: dir });
}

const problem = (name: string, text: string, env: Record<string, string> = {}, argv: string[] = []) => {
  try {
    load(name, text, env, argv);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('streams in a configuration file', () => {
  it('serves the demo stream when the file declares no streams', () => {
    const config = load('flat.yaml', 'port: 9001\nfacilities: 3\n');
    expect(config.streams).toEqual([
      expect.objectContaining({ id: 'parking', intervalSeconds: 5, source: { kind: 'simulator', facilities: 3, seed: 1 } }),
    ]);
  });

  it('reads YAML and JSON alike, applies defaults and resolves paths against the file', () => {
    writeFileSync(join(dir, 'rec.trig'), '');
    writeFileSync(join(dir, 'shapes.ttl'), '');
    const streams = [
      { id: 'a', title: 'A', source: { kind: 'simulator' } },
      { id: 'b', title: 'B', intervalSeconds: 'irregular', retainedElements: 10, source: { kind: 'replay', file: 'rec.trig', speed: 2 } },
      { id: 'c', title: 'C', shape: 'shapes.ttl', source: { kind: 'ingest', tokenEnv: 'C_TOKEN' } },
      { id: 'd', title: 'D', shape: 'none', source: { kind: 'mqtt', url: 'mqtt://127.0.0.1:1883', topics: ['x/#'], payload: 'rdf' } },
    ];
    const fromJson = load('streams.json', JSON.stringify({ streams }), { C_TOKEN: TOKEN });
    const yaml = `streams:\n${streams.map((s) => `  - ${JSON.stringify(s)}`).join('\n')}\n`;
    const fromYaml = load('streams.yaml', yaml, { C_TOKEN: TOKEN });
    expect(JSON.stringify(fromYaml.streams)).toBe(JSON.stringify(fromJson.streams));
    const [a, b, c, d] = fromJson.streams;
    expect(a).toMatchObject({ intervalSeconds: 5, retainedElements: 100_000, retainedSeconds: 0, shape: { kind: 'bundled' }, source: { facilities: 13, seed: 1 } });
    expect(b).toMatchObject({ intervalSeconds: null, retainedElements: 10, source: { kind: 'replay', file: join(dir, 'rec.trig'), speed: 2, loop: true } });
    expect(c).toMatchObject({ shape: { kind: 'file', path: join(dir, 'shapes.ttl') } });
    expect(c?.intervalSeconds).toBeUndefined();
    expect(d).toMatchObject({ shape: { kind: 'none' }, source: { qos: 1 } });
  });

  it('keeps the ingest token out of anything serialised', () => {
    const config = load('token.yaml', 'streams:\n  - { id: s, title: S, source: { kind: ingest, tokenEnv: S_TOKEN } }\n', { S_TOKEN: TOKEN });
    const source = config.streams[0]?.source as { token?: string };
    expect(source.token).toBe(TOKEN);
    expect(JSON.stringify(config)).not.toContain(TOKEN);
  });

  it('reads MQTT passwords and web-API secret headers from the environment, and never serialises them', () => {
    const config = load(
      'secrets.yaml',
      `streams:
  - { id: m, title: M, source: { kind: mqtt, url: "mqtt://h:1", topics: [a], payload: rdf, username: publisher, passwordEnv: BROKER_PASSWORD } }
  - id: w
    title: W
    source:
      kind: web-api
      url: https://api.example.org/rooms
      headers: { accept: application/json }
      headersFromEnv: { x-api-key: ROOMS_API_KEY }
      mapping: { sensor: "https://e.org/{id}", observedProperty: "https://e.org/p", featureOfInterest: "https://e.org/{id}", result: "{v}" }
`,
      { BROKER_PASSWORD: 'broker-secret', ROOMS_API_KEY: 'api-secret' },
    );
    const [mqtt, web] = config.streams.map((stream) => stream.source) as Array<Record<string, unknown>>;
    expect(mqtt).toMatchObject({ username: 'publisher', password: 'broker-secret' });
    expect(web?.secretHeaders).toEqual({ 'x-api-key': 'api-secret' });
    expect(JSON.stringify(config)).not.toMatch(/broker-secret|api-secret/);
    expect(problem('secrets-missing.yaml', 'streams:\n  - { id: m, title: M, source: { kind: mqtt, url: "mqtt://h:1", topics: [a], payload: rdf, passwordEnv: NOPE_NOT_SET } }\n')).toMatch(
      /streams\/0\/source\/passwordEnv .*Environment variable NOPE_NOT_SET must hold a value/,
    );
  });

  it.each([
    [
      'a bad source option, with its path and line',
      'streams:\n  - id: w\n    title: W\n    source:\n      kind: mqtt\n      url: tcp://127.0.0.1:1883\n      topics: [a]\n',
      /streams\/0\/source\/url \(.*bad-\w+\.yaml line 6\): Expected string to match/,
    ],
    ['an unknown source kind', 'streams:\n  - { id: w, title: W, source: { kind: kafka } }\n', /streams\/0\/source\/kind .*Expected one of simulator, replay, web-api, mqtt, ingest, got "kafka"/],
    ['a duplicate id', 'streams:\n  - { id: w, title: W, source: { kind: simulator } }\n  - { id: w, title: X, source: { kind: simulator } }\n', /streams\/1\/id .*line 3.*Duplicate stream id \(also \/streams\/0\/id\)/],
    ['a bad id', 'streams:\n  - { id: "Not OK", title: W, source: { kind: simulator } }\n', /streams\/0\/id/],
    ['an unknown stream key', 'streams:\n  - { id: w, title: W, colour: red, source: { kind: simulator } }\n', /streams\/0\/colour/],
    ['a missing title', 'streams:\n  - { id: w, source: { kind: simulator } }\n', /streams\/0\/title/],
    ['JSON payloads without a mapping', 'streams:\n  - { id: w, title: W, source: { kind: mqtt, url: "mqtt://h:1", topics: [a] } }\n', /streams\/0\/source\/mapping .*JSON payloads need a mapping/],
    ['a bad mapping', 'streams:\n  - id: w\n    title: W\n    source:\n      kind: web-api\n      url: http://h/x\n      mapping: { sensor: "s", observedProperty: "p", featureOfInterest: "f", result: "value" }\n', /streams\/0\/source\/mapping\/result \(.* line 7\)/],
    [
      'a state web API without an id per thing',
      'streams:\n  - id: w\n    title: W\n    source:\n      kind: web-api\n      url: http://h/x\n      identity: state\n      mapping: { sensor: "https://e.org/{id}", observedProperty: "https://e.org/p", featureOfInterest: "https://e.org/{id}", result: "{v}" }\n',
      /streams\/0\/source\/mapping\/id .*identity "state" needs an id template/,
    ],
    ['an irregular simulator', 'streams:\n  - { id: w, title: W, intervalSeconds: irregular, source: { kind: simulator } }\n', /streams\/0\/intervalSeconds/],
    ['an unset token variable', 'streams:\n  - { id: w, title: W, source: { kind: ingest, tokenEnv: NOT_SET_ANYWHERE } }\n', /streams\/0\/source\/tokenEnv .*NOT_SET_ANYWHERE must hold the stream's bearer token/],
    ['an empty list', 'streams: []\n', /streams .*Declare at least one stream/],
    ['a missing recording', 'streams:\n  - { id: air, title: Air, source: { kind: replay, file: no/such.trig } }\n', /streams\/0\/source\/file \(.* line 2\): stream "air": its recording \S*no\/such\.trig does not exist$/],
    ['a missing shapes file', 'streams:\n  - { id: w, title: W, shape: no-shapes.ttl, source: { kind: ingest, tokenEnv: W_TOKEN } }\n', /streams\/0\/shape .*stream "w": its shapes file \S*no-shapes\.ttl does not exist/],
    ['a bad enumeration', 'streams:\n  - { id: m, title: M, source: { kind: mqtt, url: "mqtt://127.0.0.1", topics: [a], payload: xml } }\n', /streams\/0\/source\/payload .*"xml" is not one of json, rdf$/],
    ['an interval neither a number nor irregular', 'streams:\n  - { id: m, title: M, intervalSeconds: 0, source: { kind: simulator } }\n', /streams\/0\/intervalSeconds .*Expected number to be greater than 0, or "irregular", got 0/],
    ['YAML syntax', 'port: 9000\nstreams:\n  - id: [unclosed\n', /not valid YAML: line \d+, column \d+/],
    ['a duplicate key', 'port: 1\nport: 2\n', /not valid YAML: line 2/],
  ])('refuses %s', (_name, text, message) => {
    const name = `bad-${Math.random().toString(36).slice(2)}.yaml`;
    expect(problem(name, text)).toMatch(message);
  });

  it('names the line of a bad flat option in a file', () => {
    expect(problem('flat-bad.yaml', 'host: 127.0.0.1\nport: 70000\n')).toMatch(/port \(from .*flat-bad\.yaml line 2\)/);
  });

  it('refuses an ingest stream with several workers', () => {
    const text = 'workers: 2\nstreams:\n  - { id: w, title: W, source: { kind: ingest, tokenEnv: W_TOKEN } }\n';
    expect(problem('workers.yaml', text, { W_TOKEN: TOKEN })).toMatch(/ingest stream "w" needs workers = 1/);
  });

  it('accepts examples/smart-city.yaml, one stream of each source kind', () => {
    const example = fileURLToPath(new URL('../../../../../examples/smart-city.yaml', import.meta.url));
    const config = loadConfig({ argv: ['--config', example], env: { SMART_CITY_INGEST_TOKEN: TOKEN } });
    expect(config.streams.map((stream) => stream.source.kind).sort()).toEqual(['ingest', 'mqtt', 'replay', 'simulator', 'web-api']);
  });
});
