import { readFileSync } from 'node:fs';
import { metricSum } from './process-probe.js';

/** One reading of where a process's memory is (bytes), `atMs` after sampling began. */
export interface MemorySample {
  readonly atMs: number;
  /** Resident set size (VmRSS): what the kernel holds for the process. */
  readonly rss: number;
  /** Its anonymous part (RssAnon): the JavaScript heap, buffers, malloc arenas. */
  readonly rssAnon: number;
  /** Its file-backed part (RssFile): mapped code and files, shared with the page cache. */
  readonly rssFile: number;
  /** V8 heap in use (`nodejs_heap_size_used_bytes`), or NaN when /metrics did not answer. */
  readonly heapUsed: number;
  /** Memory outside the V8 heap that V8 accounts for (`nodejs_external_memory_bytes`): Buffers. */
  readonly external: number;
  /** V8's old generation just after the latest full collection (`rdf_stream_heap_retained_bytes`). */
  readonly retainedHeap: number;
}

export type MemoryField = Exclude<keyof MemorySample, 'atMs'>;
export const memoryFields: readonly MemoryField[] = ['rss', 'rssAnon', 'rssFile', 'heapUsed', 'external', 'retainedHeap'];

const statusField = (status: string, name: string) => {
  const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status);
  return match === null ? Number.NaN : Number(match[1]) * 1024;
};

/** How long a /metrics read may take before the sample goes without heap figures (ms). */
const METRICS_TIMEOUT_MS = 2_000;

/**
 * Samples a process's memory every `intervalMs`: the kernel's view (/proc/<pid>/status) and V8's
 * (the publisher's /metrics), so that growth can be told apart — a heap that grows is a leak in
 * our code, RSS that grows with a flat heap is the allocator or buffers. Readings are taken one at
 * a time (never two /metrics requests in flight).
 */
export class MemoryProfile {
  readonly samples: MemorySample[] = [];
  readonly #started = performance.now();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(
    private readonly pid: number,
    private readonly metricsUrl: string,
    private readonly intervalMs = 10_000,
  ) {
    void this.#sample();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  /** The samples taken at or after `fraction` (0–1) of the run. */
  after(fraction: number): MemorySample[] {
    return this.samples.slice(Math.floor(this.samples.length * fraction));
  }

  async #sample(): Promise<void> {
    const atMs = performance.now() - this.#started;
    let status: string;
    try {
      status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    } catch {
      return; // the process is gone
    }
    let metrics = '';
    try {
      const response = await fetch(this.metricsUrl, { signal: AbortSignal.timeout(METRICS_TIMEOUT_MS) });
      if (response.ok) metrics = await response.text();
      else await response.body?.cancel();
    } catch {
      // a busy publisher: this sample has the kernel's figures only
    }
    const fromMetrics = (name: string) => (metrics === '' ? Number.NaN : metricSum(metrics, name));
    this.samples.push({
      atMs,
      rss: statusField(status, 'VmRSS'),
      rssAnon: statusField(status, 'RssAnon'),
      rssFile: statusField(status, 'RssFile'),
      heapUsed: fromMetrics('nodejs_heap_size_used_bytes'),
      external: fromMetrics('nodejs_external_memory_bytes'),
      retainedHeap: fromMetrics('rdf_stream_heap_retained_bytes'),
    });
    if (!this.#stopped) this.#timer = setTimeout(() => void this.#sample(), this.intervalMs);
  }
}
