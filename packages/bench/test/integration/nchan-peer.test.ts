import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Value } from '@sinclair/typebox/value';
import { afterAll, describe, expect, it } from 'vitest';
import { NCHAN_MODULE_ENV } from '../../src/process/private-nchan.js';
import { SummarySchema } from '../../src/report/summary-schema.js';

const run = promisify(execFile);
const out = mkdtempSync(join(tmpdir(), 'bench-nchan-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
const cwd = fileURLToPath(new URL('../..', import.meta.url));
const CLIENTS = 40;

describe('pnpm bench --peer nchan (the real nginx + nchan, a small fleet)', () => {
  it('runs the same SSE fleet against the publisher and against nchan, and reports them side by side', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', cli, '--mode', 'sse', '--peer', 'nchan', '--clients', String(CLIENTS), '--duration', '6', '--ramp', '1', '--interval', '1', '--port', '18930', '--throughput-duration', '0', '--out', out],
      { cwd, timeout: 180_000 },
    );
    expect(stdout).toMatch(/The publisher beside nchan/);
    const summary: unknown = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect([...Value.Errors(SummarySchema, summary)].map((error) => `${error.path}: ${error.message}`)).toEqual([]);
    const { runs, peerComparison, goals } = summary as {
      runs: Array<{ peer?: string; connected: number; updatesExpected: number; updatesReceived: number; missedUpdates: number; errors: number; serverCpuMicrosPerUpdate: number | null; serverRssMiB: { mean: number } | null; memory: { connection: string } | null }>;
      peerComparison: Array<{ clients: number; ratio: { cpuMicrosPerUpdate: number | null; p99: number | null } }>;
      goals: Array<{ goal: string; reference: string | null; value: number | null }>;
    };
    expect(runs.map((r) => r.peer)).toEqual([undefined, 'nchan']);
    for (const r of runs) {
      expect(r.connected).toBe(CLIENTS);
      expect(r.errors).toBe(0);
      // Every client got every element published while it was connected, from either server.
      expect(r.updatesExpected).toBeGreaterThanOrEqual(CLIENTS * 3);
      expect(r.missedUpdates).toBe(0);
      expect(r.updatesReceived).toBe(r.updatesExpected);
      expect(r.serverCpuMicrosPerUpdate).toBeGreaterThan(0);
      expect(r.serverRssMiB!.mean).toBeGreaterThan(0);
    }
    expect(runs[1]!.memory?.connection).toBe('SSE subscriber of nchan');
    expect(peerComparison).toHaveLength(1);
    expect(peerComparison[0]!.clients).toBe(CLIENTS);
    expect(peerComparison[0]!.ratio.cpuMicrosPerUpdate).toBeGreaterThan(0);
    expect(peerComparison[0]!.ratio.p99).toBeGreaterThan(0);
    expect(goals).toEqual([expect.objectContaining({ goal: 'SSE CPU ≤ 0.7 × nchan’s', reference: 'sse (identity) on nchan', value: expect.any(Number) })]);
    const report = readFileSync(join(out, 'report.md'), 'utf8');
    expect(report).toMatch(/## The publisher beside nchan/);
    expect(report).toMatch(/\| sse \(identity\) on nchan \| 40 \| 40 \|/);
  }, 200_000);

  it('fails, saying what to install, when the nchan module is missing (it does not skip the peer)', async () => {
    const failure = await run(process.execPath, ['--import', 'tsx', cli, '--mode', 'sse', '--peer', 'nchan', '--clients', '10', '--throughput-duration', '0', '--out', out], {
      cwd,
      env: { ...process.env, [NCHAN_MODULE_ENV]: join(out, 'no-such-module.so') },
    }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toMatch(/--peer nchan needs the nchan module .*no-such-module\.so \(Debian package libnginx-mod-nchan\): apt-get install -y nginx libnginx-mod-nchan/);
  });
});
