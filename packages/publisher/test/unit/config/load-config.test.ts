import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigSchema, optionGroups } from '../../../src/config/config-schema.js';
import { defaults } from '../../../src/config/defaults.js';
import { ConfigError, ConfigHelp, loadConfig, withListeningPort } from '../../../src/config/load-config.js';

const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'config-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('loadConfig', () => {
  it('uses the named defaults, with a base URL derived from host and port', () => {
    const config = loadConfig();
    expect(config.port).toBe(defaults.port);
    expect(config.intervalSeconds).toBe(5);
    expect(config.baseUrl).toBe('http://127.0.0.1:8080');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('takes flags over environment over file over defaults', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'publisher.json'), JSON.stringify({ port: 7000, heartbeatMs: 5000, facilities: 3 }));
    const config = loadConfig({
      argv: ['--config', 'publisher.json', '--port', '9000', '--interval', '2'],
      env: { RDF_STREAM_PORT: '8000', RDF_STREAM_HEARTBEAT_MS: '6000' },
      cwd: dir,
    });
    expect(config.port).toBe(9000);
    expect(config.intervalSeconds).toBe(2);
    expect(config.heartbeatMs).toBe(6000);
    expect(config.facilities).toBe(3);
  });

  it('takes an interval in fractions of a second (--interval 0.25: four elements a second)', () => {
    expect(loadConfig({ argv: ['--interval', '0.25'] }).intervalSeconds).toBe(0.25);
    expect(loadConfig({ env: { RDF_STREAM_INTERVAL_SECONDS: '0.25' } }).intervalSeconds).toBe(0.25);
  });

  it('strips a trailing slash from the base URL and brackets IPv6 hosts', () => {
    expect(loadConfig({ argv: ['--base-url', 'https://data.example.org/rdf/'] }).baseUrl).toBe(
      'https://data.example.org/rdf',
    );
    expect(loadConfig({ argv: ['--host', '::1'] }).baseUrl).toBe('http://[::1]:8080');
  });

  it.each([
    [['--port', '70000'], /port \(from --port\).*70000/s],
    [['--port', 'eighty'], /port \(from --port\)/],
    [['--interval', '0'], /intervalSeconds \(from --interval\)/],
    [['--log-level', 'loud'], /logLevel \(from --log-level\): "loud" is not one of fatal, error, warn, info, debug, trace, silent$/m],
    [['--log', 'memori'], /log \(from --log\): "memori" is not one of file, memory, redis$/m],
    [['--log-format', 'xml'], /logFormat \(from --log-format\): "xml" is not one of auto, pretty, json$/m],
    [['--stream-id', 'Bad Id'], /streamId/],
    [['--base-url', 'not a url'], /baseUrl/],
    [['--no-such-flag'], /unknown option '--no-such-flag'/],
    [['--headers-timeout-ms', '20000', '--request-timeout-ms', '10000'], /headersTimeoutMs \(20000\) must not exceed requestTimeoutMs \(10000\)/],
  ])('rejects %j with a message naming the value and its origin', (argv, message) => {
    expect(() => loadConfig({ argv })).toThrow(ConfigError);
    expect(() => loadConfig({ argv })).toThrow(message);
  });

  it('names the environment variable a bad value came from', () => {
    expect(() => loadConfig({ env: { RDF_STREAM_RETAINED_ELEMENTS: '-5' } })).toThrow(
      /retainedElements \(from environment variable RDF_STREAM_RETAINED_ELEMENTS\)/,
    );
  });

  it('names the allowed values of an enumeration set in the environment or a file, with the line', () => {
    expect(() => loadConfig({ env: { RDF_STREAM_LOG_FORMAT: 'xml' } })).toThrow(
      /logFormat \(from environment variable RDF_STREAM_LOG_FORMAT\): "xml" is not one of auto, pretty, json$/m,
    );
    const dir = tempDir();
    writeFileSync(join(dir, 'publisher.yaml'), 'port: 9000\nlog: memori\n');
    expect(() => loadConfig({ argv: ['--config', 'publisher.yaml'], cwd: dir })).toThrow(
      /log \(from .*publisher\.yaml line 2\): "memori" is not one of file, memory, redis$/m,
    );
  });

  it("resolves a data directory from a file against the file's folder, from a flag or the environment against the working directory", () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'etc'));
    writeFileSync(join(dir, 'etc', 'publisher.yaml'), 'dataDir: state\n');
    const cwd = join(dir, 'elsewhere');
    expect(loadConfig({ argv: ['--config', '../etc/publisher.yaml'], cwd }).dataDir).toBe(join(dir, 'etc', 'state'));
    expect(loadConfig({ argv: ['--config', '../etc/publisher.yaml', '--data-dir', 'state'], cwd }).dataDir).toBe(join(cwd, 'state'));
    expect(loadConfig({ argv: ['--config', '../etc/publisher.yaml'], env: { RDF_STREAM_DATA_DIR: 'state' }, cwd }).dataDir).toBe(join(cwd, 'state'));
    expect(loadConfig({ cwd }).dataDir).toBe(join(cwd, 'data'));
  });

  it('a derived base URL follows the port actually bound; a configured one stays', () => {
    const derived = withListeningPort(loadConfig({ argv: ['--port', '0'] }), 43_210);
    expect(derived.port).toBe(43_210);
    expect(derived.baseUrl).toBe('http://127.0.0.1:43210');
    expect(Object.isFrozen(derived)).toBe(true);
    const configured = withListeningPort(loadConfig({ argv: ['--port', '0', '--base-url', 'https://data.example.org'] }), 43_210);
    expect(configured.port).toBe(43_210);
    expect(configured.baseUrl).toBe('https://data.example.org');
  });

  it('--help lists every option under exactly one heading', () => {
    const grouped = Object.values(optionGroups).flat();
    expect([...grouped].sort()).toEqual(Object.keys(ConfigSchema.properties).sort());
  });

  it('rejects unknown keys and unreadable or malformed files', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'extra.json'), JSON.stringify({ prot: 1 }));
    writeFileSync(join(dir, 'broken.json'), '{ "port": ');
    expect(() => loadConfig({ argv: ['--config', 'extra.json'], cwd: dir })).toThrow(/prot/);
    expect(() => loadConfig({ argv: ['--config', 'broken.json'], cwd: dir })).toThrow(/not valid JSON/);
    expect(() => loadConfig({ argv: ['--config', 'missing.json'], cwd: dir })).toThrow(/Cannot read/);
  });

  it('--help lists every option with its environment variable', () => {
    try {
      loadConfig({ argv: ['--help'] });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigHelp);
      const { output } = error as ConfigHelp;
      expect(output).toContain('--interval <value>');
      expect(output).toContain('RDF_STREAM_MAX_SUBSCRIBER_QUEUE_BYTES');
      expect(output).toContain('--config <file>');
    }
  });
});
