import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PUBLISHER_NODE_OPTIONS } from '../../src/process/publisher-process.js';
import { freePort } from '../../src/reliability/free-port.js';
import { RestartablePublisher, usePublisherDiagnostics } from '../../src/reliability/restartable-publisher.js';

describe('RestartablePublisher diagnostics', () => {
  const dir = mkdtempSync(join(tmpdir(), 'restartable-publisher-test-'));
  afterEach(() => {
    usePublisherDiagnostics({ nodeOptions: [] });
    rmSync(dir, { recursive: true, force: true });
  });

  it("passes Node's options to the publisher and appends its output, each start headed, to the log file", { timeout: 60_000 }, async () => {
    const logFile = join(dir, 'publisher.log');
    usePublisherDiagnostics({ nodeOptions: ['--trace-gc', '--max-semi-space-size=2'], logFile });
    const publisher = new RestartablePublisher({ port: await freePort() });
    await publisher.start();
    const commandLine = readFileSync(`/proc/${publisher.pid}/cmdline`, 'utf8').split('\0');
    // The options every launcher gives the publisher, then the diagnostics' (the last one of a kind decides).
    expect(commandLine.slice(1, 3 + PUBLISHER_NODE_OPTIONS.length)).toEqual([...PUBLISHER_NODE_OPTIONS, '--trace-gc', '--max-semi-space-size=2']);
    const { pid } = publisher;
    await publisher.dispose();

    const log = readFileSync(logFile, 'utf8');
    expect(log.split('\n')[0]).toMatch(new RegExp(`^== publisher ${pid} started \\S+: ${PUBLISHER_NODE_OPTIONS.join(' ')} --trace-gc --max-semi-space-size=2 `));
    // The publisher's own log (standard output) and V8's trace (a 2 MiB young generation collects during start-up).
    expect(log).toContain('"msg":"Server listening');
    expect(log).toMatch(/\d+ ms: Scavenge/);
  });
});

describe('RestartablePublisher environment', () => {
  it("runs the publisher with the deployed environment, the caller's variables winning", { timeout: 60_000 }, async () => {
    const inherited = process.env.MALLOC_ARENA_MAX;
    const environment = (publisher: RestartablePublisher) => readFileSync(`/proc/${publisher.pid}/environ`, 'utf8').split('\0');
    const asDeployed = new RestartablePublisher({ port: await freePort() });
    const fromShell = new RestartablePublisher({ port: await freePort() });
    const fromOptions = new RestartablePublisher({ port: await freePort(), env: { MALLOC_ARENA_MAX: '8' } });
    try {
      delete process.env.MALLOC_ARENA_MAX;
      await Promise.all([asDeployed.start(), fromOptions.start()]);
      expect(environment(asDeployed)).toContain('MALLOC_ARENA_MAX=2');
      expect(environment(fromOptions)).toContain('MALLOC_ARENA_MAX=8');
      // `MALLOC_ARENA_MAX=4 pnpm test:reliability ...`
      process.env.MALLOC_ARENA_MAX = '4';
      await fromShell.start();
      expect(environment(fromShell)).toContain('MALLOC_ARENA_MAX=4');
    } finally {
      if (inherited === undefined) delete process.env.MALLOC_ARENA_MAX;
      else process.env.MALLOC_ARENA_MAX = inherited;
      await Promise.all([asDeployed.dispose(), fromShell.dispose(), fromOptions.dispose()]);
    }
  });
});
