import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ, the unit of /proc/<pid>/stat's times (100 on every architecture Node runs on). */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * The CPU time a process has run, read to the nanosecond from each of its threads'
 * `/proc/<pid>/task/<tid>/schedstat` (the first field is the time the thread has run, ns).
 *
 * `/proc/<pid>/stat` counts whole 10 ms clock ticks, too coarse for a small fleet: an nginx worker
 * that serves 40 subscribers for a few seconds runs well under one tick and read as 0. The clock
 * adds up what each thread ran between two readings, so a thread that starts counts from its start,
 * and one that exits between two readings loses only what it ran since the last (a Node process's
 * threads live as long as it does). Where the kernel has no schedstat (built without
 * CONFIG_SCHED_INFO), it falls back to the ticks of `/proc/<pid>/stat`.
 */
export class ProcessCpuClock {
  readonly #pid: number;
  /** Nanoseconds each thread had run at the last reading, by thread id. */
  #threads = new Map<string, number>();
  #totalNs = 0;
  #schedstat = true;

  constructor(pid: number) {
    this.#pid = pid;
  }

  /** CPU time the process has run (ms), counted from the first reading's threads; throws once the process is gone. */
  readMs(): number {
    if (this.#schedstat) {
      try {
        return this.#readThreadsNs() / 1e6;
      } catch (error) {
        if (!isMissing(error) || this.#threads.size > 0 || !processExists(this.#pid)) throw error;
        this.#schedstat = false;
      }
    }
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th, in clock ticks.
    const fields = readFileSync(`/proc/${this.#pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  }

  #readThreadsNs(): number {
    const seen = new Map<string, number>();
    for (const tid of readdirSync(`/proc/${this.#pid}/task`)) {
      let ranNs: number;
      try {
        ranNs = Number(readFileSync(`/proc/${this.#pid}/task/${tid}/schedstat`, 'utf8').split(' ', 1)[0]);
      } catch (error) {
        // A thread that exited between the listing and the read.
        if (isMissing(error) && processExists(this.#pid)) continue;
        throw error;
      }
      seen.set(tid, ranNs);
      this.#totalNs += ranNs - (this.#threads.get(tid) ?? 0);
    }
    if (seen.size === 0) throw Object.assign(new Error(`process ${this.#pid} has no threads left`), { code: 'ENOENT' });
    this.#threads = seen;
    return this.#totalNs;
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ESRCH';
}

function processExists(pid: number): boolean {
  try {
    readFileSync(`/proc/${pid}/stat`);
    return true;
  } catch {
    return false;
  }
}
