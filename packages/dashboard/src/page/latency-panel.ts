import { LatencyRecorder } from '@rdf-stream/client/live';
import { facts, formatMs, h } from './dom.js';

/** Upper bounds of the histogram's buckets, in milliseconds (the last one is open). */
const bucketBoundsMs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 5_000];

/**
 * The latency of every live update on this client (the client library's `LatencyRecorder`,
 * corrected by the clock offset): percentiles and a small histogram as a table of counts.
 */
export class LatencyPanel {
  readonly element: HTMLElement;
  readonly recorder = new LatencyRecorder();
  readonly #counts = new Array<number>(bucketBoundsMs.length + 1).fill(0);
  readonly #values = { count: h('dd', { id: 'latency-count' }, '0'), p50: h('dd', { id: 'latency-p50' }, '–'), p90: h('dd', { id: 'latency-p90' }, '–'), p99: h('dd', { id: 'latency-p99' }, '–'), max: h('dd', { id: 'latency-max' }, '–') };
  readonly #histogram = h('tbody');

  constructor() {
    this.element = h(
      'section',
      { 'aria-labelledby': 'latency-heading' },
      h('h2', { id: 'latency-heading' }, 'Latency on this client'),
      facts([
        ['Live updates measured', this.#values.count],
        ['p50', this.#values.p50],
        ['p90', this.#values.p90],
        ['p99', this.#values.p99],
        ['max', this.#values.max],
      ]),
      h(
        'table',
        { id: 'latency-histogram' },
        h('caption', { class: 'muted' }, 'Histogram: updates per latency range'),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Latency'), h('th', { scope: 'col', class: 'number' }, 'Updates'), h('th', { scope: 'col' }, 'Share'))),
        this.#histogram,
      ),
    );
    this.#render();
  }

  record(latencyMs: number): void {
    if (!Number.isFinite(latencyMs)) return;
    this.recorder.record(latencyMs);
    const bucket = bucketBoundsMs.findIndex((bound) => latencyMs < bound);
    this.#counts[bucket === -1 ? bucketBoundsMs.length : bucket]! += 1;
    this.#render();
  }

  #render(): void {
    const summary = this.recorder.summary();
    this.#values.count.textContent = String(summary.count);
    if (summary.count > 0) {
      this.#values.p50.textContent = formatMs(summary.p50);
      this.#values.p90.textContent = formatMs(summary.p90);
      this.#values.p99.textContent = formatMs(summary.p99);
      this.#values.max.textContent = formatMs(summary.max);
    }
    const total = Math.max(1, summary.count);
    this.#histogram.replaceChildren(
      ...this.#counts.map((count, index) => {
        const label = index === 0 ? `< ${bucketBoundsMs[0]} ms` : index === bucketBoundsMs.length ? `≥ ${bucketBoundsMs.at(-1)} ms` : `${bucketBoundsMs[index - 1]}–${bucketBoundsMs[index]} ms`;
        const share = Math.round((count / total) * 100);
        return h('tr', {}, h('th', { scope: 'row' }, label), h('td', { class: 'number' }, count), h('td', {}, h('span', { class: 'bar', style: `width:${share * 1.5}px` }), ` ${share} %`));
      }),
    );
  }
}
