import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ProcessCpuClock } from '../../../src/collect/process-cpu-clock.js';

/** Runs on the CPU until `process.cpuUsage` has counted `ms` more for this process. */
function burn(ms: number): number {
  const start = process.cpuUsage();
  let spent = 0;
  while (spent < ms * 1000) {
    const used = process.cpuUsage(start);
    spent = used.user + used.system;
  }
  return spent / 1000;
}

describe('ProcessCpuClock', () => {
  it('reads CPU time finer than the 10 ms clock tick of /proc/<pid>/stat', () => {
    const clock = new ProcessCpuClock(process.pid);
    const before = clock.readMs();
    const spentMs = burn(3);
    const ranMs = clock.readMs() - before;
    // Less than one tick of work is seen, and not as a whole tick: /proc/<pid>/stat would say 0 or 10.
    expect(ranMs).toBeGreaterThan(0);
    expect(ranMs).toBeGreaterThanOrEqual(spentMs * 0.5);
    expect(ranMs).not.toBe(10);
  });

  it('agrees with the process’s own count over a longer span, and never goes back', () => {
    const clock = new ProcessCpuClock(process.pid);
    const readings = [clock.readMs()];
    const usage = process.cpuUsage();
    for (let i = 0; i < 5; i++) {
      burn(20);
      readings.push(clock.readMs());
    }
    const spent = process.cpuUsage(usage);
    const spentMs = (spent.user + spent.system) / 1000;
    for (let i = 1; i < readings.length; i++) expect(readings[i]!).toBeGreaterThanOrEqual(readings[i - 1]!);
    // Both count every thread of this process; the clock misses only what a thread that exited ran.
    expect(readings.at(-1)! - readings[0]!).toBeGreaterThan(spentMs * 0.8);
    expect(readings.at(-1)! - readings[0]!).toBeLessThan(spentMs * 1.2 + 10);
  });

  it('reads another process, all of its threads, and throws once it is gone', async () => {
    // The child runs 150 ms on the CPU, says so, then idles until it is killed.
    const child = spawn(process.execPath, ['-e', "const s = process.cpuUsage(); while (process.cpuUsage(s).user < 150_000); console.log('ran'); setInterval(() => {}, 1000)"], { stdio: ['ignore', 'pipe', 'ignore'] });
    await once(child.stdout!, 'data');
    const clock = new ProcessCpuClock(child.pid!);
    expect(clock.readMs()).toBeGreaterThanOrEqual(150);
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(() => clock.readMs()).toThrow(/ENOENT|ESRCH|no threads/);
  });
});
