import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h, localName } from './dom.js';
import type { PageObservation } from './observations.js';

/** How far back the charts reach (and the history the page replays at load). */
export const CHART_WINDOW_MS = 5 * 60_000;

/**
 * The least time between two redraws of the charts. Five minutes over about 1 100 pixels are
 * 0.27 s a pixel: redrawing more often shows nothing new, and a redraw of every line (3 000
 * points each at 10 elements a second) held the page's main thread up to 100 ms a frame.
 */
export const CHART_REDRAW_INTERVAL_MS = 250;

// Colour and dash together, so that lines stay apart without colour.
const palette = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
const dashes: ReadonlyArray<number[] | undefined> = [undefined, [6, 3], [2, 2], [10, 3, 2, 3]];

type Value = number | null | undefined;

/** One chart: the values of one observed property, a line per feature of interest. */
class PropertyChart {
  readonly element: HTMLElement;
  readonly #times: number[] = [];
  readonly #lines = new Map<string, Value[]>();
  readonly #plot: uPlot;
  #gapPending = false;

  constructor(property: string, unit: string | undefined, width: number) {
    const name = localName(property);
    const holder = h('div', { role: 'img', 'aria-label': `Chart of ${name} over the last ${CHART_WINDOW_MS / 60_000} minutes; the table above holds the latest values.` });
    this.element = h('figure', { class: 'property-chart' }, h('figcaption', { title: property }, unit === undefined ? name : `${name} (${localName(unit)})`), holder);
    this.#plot = new uPlot(
      {
        width,
        height: 220,
        series: [{}],
        scales: { x: { time: true } },
        axes: [{}, { label: unit === undefined ? name : localName(unit) }],
        legend: { live: true },
      },
      [[]],
      holder,
    );
  }

  /** The next element's values; a feature it does not mention is spanned over, not a gap. */
  add(atMs: number, values: ReadonlyMap<string, number>): void {
    for (const feature of values.keys()) if (!this.#lines.has(feature)) this.#addLine(feature);
    if (this.#gapPending && this.#times.length > 0) {
      this.#times.push((atMs - 1) / 1_000);
      for (const line of this.#lines.values()) line.push(null);
    }
    this.#gapPending = false;
    this.#times.push(atMs / 1_000);
    for (const [feature, line] of this.#lines) line.push(values.get(feature));
    const oldest = (atMs - CHART_WINDOW_MS) / 1_000;
    let drop = 0;
    while (drop < this.#times.length && (this.#times[drop] as number) < oldest) drop++;
    if (drop > 0) {
      this.#times.splice(0, drop);
      for (const line of this.#lines.values()) line.splice(0, drop);
    }
  }

  /** Elements were lost: the next one starts a new line segment. */
  markGap(): void {
    this.#gapPending = true;
  }

  draw(): void {
    this.#plot.setData([this.#times, ...this.#lines.values()] as uPlot.AlignedData);
  }

  #addLine(feature: string): void {
    const index = this.#lines.size;
    this.#lines.set(feature, this.#times.map(() => undefined));
    this.#plot.addSeries({
      label: localName(feature),
      stroke: palette[index % palette.length],
      width: 1.5,
      spanGaps: false,
      ...(dashes[Math.floor(index / palette.length) % dashes.length] === undefined ? {} : { dash: dashes[Math.floor(index / palette.length) % dashes.length] }),
    });
  }
}

/** A chart per observed property, filled from the replayed history and extended live. */
export class PropertyCharts {
  readonly element = h('div', { id: 'charts' });
  readonly #charts = new Map<string, PropertyChart>();
  #drawPending = false;
  #drawnAt = Number.NEGATIVE_INFINITY;

  get count(): number {
    return this.#charts.size;
  }

  add(generatedAtMs: number, observations: readonly PageObservation[]): void {
    const byProperty = new Map<string, Map<string, number>>();
    const units = new Map<string, string | undefined>();
    for (const observation of observations) {
      if (typeof observation.value !== 'number') continue;
      let values = byProperty.get(observation.observedProperty);
      if (values === undefined) byProperty.set(observation.observedProperty, (values = new Map()));
      values.set(observation.featureOfInterest, observation.value);
      units.set(observation.observedProperty, observation.unit);
    }
    for (const [property, values] of byProperty) {
      let chart = this.#charts.get(property);
      if (chart === undefined) {
        chart = new PropertyChart(property, units.get(property), Math.max(320, Math.min(this.element.clientWidth || 900, 1100)));
        this.#charts.set(property, chart);
        this.element.append(chart.element);
      }
      chart.add(generatedAtMs, values);
    }
    this.#scheduleDraw();
  }

  markGap(): void {
    for (const chart of this.#charts.values()) chart.markGap();
  }

  // One redraw per frame, however many elements arrived (a replayed history comes at once), and
  // none sooner than CHART_REDRAW_INTERVAL_MS after the last.
  #scheduleDraw(): void {
    if (this.#drawPending) return;
    this.#drawPending = true;
    const draw = () =>
      requestAnimationFrame((now) => {
        this.#drawPending = false;
        this.#drawnAt = now;
        for (const chart of this.#charts.values()) chart.draw();
      });
    const waitMs = this.#drawnAt + CHART_REDRAW_INTERVAL_MS - performance.now();
    if (waitMs <= 0) draw();
    else setTimeout(draw, waitMs);
  }
}
