import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaults } from '../../../src/config/defaults.js';
import { ConfigError, ConfigHelp, loadConfig } from '../../../src/config/load-config.js';

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
    [['--log-level', 'loud'], /logLevel/],
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
