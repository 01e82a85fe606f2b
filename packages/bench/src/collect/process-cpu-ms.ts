import { readFileSync } from 'node:fs';

/** Linux's USER_HZ, the unit of /proc/<pid>/stat's times (100 on every architecture Node runs on). */
const CLOCK_TICKS_PER_SECOND = 100;

/** A process's CPU time so far (user + system, ms), from /proc/<pid>/stat (Linux; throws elsewhere). */
export function processCpuMs(pid: number): number {
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th, in clock ticks.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}
