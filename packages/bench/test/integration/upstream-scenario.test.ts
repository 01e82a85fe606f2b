import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ArmResult, runUpstreamScenario } from '../../src/scenario/run-upstream.js';

const outDir = mkdtempSync(join(tmpdir(), 'upstream-scenario-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

// The scenario at its smallest: a real upstream process, a real Varnish (Debian's package, via
// scripts/proxy.sh), a real publisher process, and client processes, in both arms.
describe('pnpm bench --scenario upstream', () => {
  it('runs both arms: pollers through Varnish reach the upstream about once a second, the publisher once per poll', async () => {
    const results = await runUpstreamScenario(
      { clientCounts: [6], durationSeconds: 8, rampSeconds: 1, changeSeconds: 2, pollSeconds: 1, changes: 1, encoding: 'gzip', clientProcesses: 2, port: 18_980, outDir },
      () => undefined,
    );
    expect(results.map((result) => result.arm)).toEqual(['varnish', 'patches']);
    const [varnish, patches] = results as [ArmResult, ArmResult];
    for (const result of results) {
      expect(result.connected).toBe(6);
      expect(result.errors).toBe(0);
      // 8 s with a change every 2 s: every client sees changes, each counted once.
      expect(result.changesSeen).toBeGreaterThanOrEqual(6 * 2);
      expect(result.changesSeen).toBeLessThanOrEqual(6 * 5);
      expect(result.bytesPerClientPerMinute).toBeGreaterThan(0);
    }
    // Six clients polling every second through a cache whose copies live a second; the publisher polls once a second.
    expect(varnish.clientRequestsPerSecond).toBeGreaterThanOrEqual(4);
    expect(varnish.upstreamRequestsPerSecond).toBeLessThanOrEqual(2.5);
    expect(patches.upstreamRequestsPerSecond).toBeLessThanOrEqual(1.5);
    expect(patches.responseMs).toBeNull();
    expect(readFileSync(join(outDir, 'upstream.md'), 'utf8')).toContain('| 6 | patches | 6 |');
  }, 120_000);
});
