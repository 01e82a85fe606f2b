import pidusage from 'pidusage';

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
  readonly #cpu: number[] = [];
  readonly #rss: number[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(pids: number[]) {
    this.#pids = pids;
  }

  start(): void {
    // pidusage's first sample of a process is 0: take one now, keep those from the next tick.
    void pidusage(this.#pids).catch(() => undefined);
    this.#timer = setInterval(() => {
      pidusage(this.#pids).then(
        (stats) => {
          const values = Object.values(stats);
          this.#cpu.push(values.reduce((sum, stat) => sum + stat.cpu * 10, 0));
          this.#rss.push(values.reduce((sum, stat) => sum + stat.memory / 1_048_576, 0));
        },
        () => undefined,
      );
    }, 1000);
  }

  stop(): ResourceSummary {
    clearInterval(this.#timer);
    const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);
    const round = (value: number) => Math.round(value * 10) / 10;
    return {
      cpuMilli: { mean: round(mean(this.#cpu)), max: round(Math.max(0, ...this.#cpu)) },
      rssMiB: { mean: round(mean(this.#rss)), max: round(Math.max(0, ...this.#rss)) },
      samples: this.#cpu.length,
    };
  }
}
