import pidusage from 'pidusage';
import { ProcessCpuClock } from './process-cpu-clock.js';

export interface ResourceSummary {
  readonly cpuMilli: { readonly mean: number; readonly max: number };
  readonly rssMiB: { readonly mean: number; readonly max: number };
  readonly samples: number;
}

/**
 * Samples the CPU (milli-CPU: 1000 = one core, as the study reports) and RSS of processes every
 * second, summing them (publisher and proxy together, as the study measured its pod).
 */
export class ProcessSampler {
  readonly #pids: number[];
  readonly #clocks: ProcessCpuClock[];
  readonly #cpu: number[] = [];
  readonly #rss: number[] = [];
  /** CPU time the processes have used since they started (ms), with when it was read (epoch ms). */
  readonly #cpuTime: Array<{ atMs: number; cpuTimeMs: number }> = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(pids: number[]) {
    this.#pids = pids;
    this.#clocks = pids.map((pid) => new ProcessCpuClock(pid));
  }

  start(): void {
    // The first CPU figure is the span from this sample to the next.
    void this.#sample();
    this.#timer = setInterval(() => void this.#sample(), 1000);
  }

  async #sample(): Promise<void> {
    try {
      // CPU time to the nanosecond (see ProcessCpuClock), not pidusage's whole 10 ms ticks; and from
      // the CPU time between two samples, not pidusage's `cpu`: that is relative to pidusage's
      // previous reading of the process by anyone, and a second sampler of the same process (an
      // instance apart, besides the sum) would read about 0.
      const reading = { atMs: Date.now(), cpuTimeMs: this.#clocks.reduce((sum, clock) => sum + clock.readMs(), 0) };
      const values = Object.values(await pidusage(this.#pids));
      const previous = this.#cpuTime.at(-1);
      if (previous !== undefined) this.#cpu.push(((reading.cpuTimeMs - previous.cpuTimeMs) / Math.max(1, reading.atMs - previous.atMs)) * 1000);
      this.#rss.push(values.reduce((sum, stat) => sum + stat.memory / 1_048_576, 0));
      this.#cpuTime.push(reading);
    } catch {
      // a process is gone
    }
  }

  /**
   * CPU time the processes used between two moments (ms), read between the once-a-second samples
   * around each (linearly); null when the samples do not cover the span.
   */
  cpuTimeBetween(fromMs: number, toMs: number): number | null {
    const at = (time: number) => {
      const after = this.#cpuTime.findIndex((sample) => sample.atMs >= time);
      if (after <= 0) return after === 0 && this.#cpuTime[0]!.atMs - time < 1_000 ? this.#cpuTime[0]!.cpuTimeMs : null;
      const [left, right] = [this.#cpuTime[after - 1]!, this.#cpuTime[after]!];
      return left.cpuTimeMs + ((right.cpuTimeMs - left.cpuTimeMs) * (time - left.atMs)) / Math.max(1, right.atMs - left.atMs);
    };
    const from = at(fromMs);
    const to = at(toMs);
    return from === null || to === null ? null : to - from;
  }

  /** Stops sampling after one last sample (so that the span up to now is covered). */
  async stop(): Promise<ResourceSummary> {
    clearInterval(this.#timer);
    await this.#sample();
    const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);
    const round = (value: number) => Math.round(value * 10) / 10;
    return {
      cpuMilli: { mean: round(mean(this.#cpu)), max: round(Math.max(0, ...this.#cpu)) },
      rssMiB: { mean: round(mean(this.#rss)), max: round(Math.max(0, ...this.#rss)) },
      samples: this.#cpu.length,
    };
  }
}
