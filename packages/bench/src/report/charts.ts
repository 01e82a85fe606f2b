import { Resvg } from '@resvg/resvg-js';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { CapacityPlan } from '../analyze/capacity-plan.js';
import type { ConnectionMemoryRow } from '../analyze/memory-per-connection.js';
import type { Series } from '../reliability/scenario-result.js';
import type { RunSummary } from '../scenario/run-benchmark.js';
import { runLabel } from './run-label.js';

export interface Chart {
  readonly name: string;
  readonly title: string;
  readonly svg: string;
  readonly png: Buffer;
}


/** Renders a Vega-Lite spec headlessly to SVG (for the HTML report) and PNG (to look at). */
async function render(name: string, title: string, spec: TopLevelSpec): Promise<Chart> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  const png = Buffer.from(new Resvg(svg, { background: 'white', fitTo: { mode: 'zoom', value: 2 } }).render().asPng());
  return { name, title, svg, png };
}

/**
 * The study's figures: latency density per client count for each mode (Fig. 2 and 3), and the
 * server's CPU and memory against clients (Fig. 4 and 5); then connected clients over time,
 * latency per element, the capacity plan and the MAL table. A chart without data is left out.
 */
export async function benchCharts(
  runs: readonly RunSummary[],
  plan: CapacityPlan,
  mal?: { table: ReadonlyArray<{ malSeconds: number; maxUsers: number }> },
  memory: readonly ConnectionMemoryRow[] = [],
): Promise<Chart[]> {
  return [
    ...(await latencyDensityCharts(runs)),
    ...(await serverResourceCharts(runs)),
    ...(await memoryPerConnectionChart(memory)),
    ...(await connectedClientsChart(runs)),
    ...(await perElementChart(runs)),
    ...(await capacityPlanChart(plan)),
    ...(mal === undefined ? [] : [await malChart(mal.table)]),
  ];
}

/** Per mode, the density of the latency on the client, one line per client count (Fig. 2 and 3). */
async function latencyDensityCharts(runs: readonly RunSummary[]): Promise<Chart[]> {
  const charts: Chart[] = [];
  for (const mode of new Set(runs.map(runLabel))) {
    const values = runs
      .filter((run) => runLabel(run) === mode)
      .flatMap((run) => run.samples.map(([, latencyMs]) => ({ clients: run.clients, latencyMs })));
    if (values.length === 0) continue;
    charts.push(
      await render(`latency-density-${mode.replace(/\W+/g, '-').replace(/^-|-$/g, '')}`, `Latency on the client, ${mode}`, {
        $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
        width: 560,
        height: 260,
        title: `Latency on the client: ${mode} (density per number of clients)`,
        data: { values },
        transform: [{ density: 'latencyMs', groupby: ['clients'], as: ['latencyMs', 'density'] }],
        mark: { type: 'line' },
        encoding: {
          x: { field: 'latencyMs', type: 'quantitative', title: 'latency (ms)' },
          y: { field: 'density', type: 'quantitative', title: 'density' },
          color: { field: 'clients', type: 'ordinal', title: 'clients' },
        },
      }),
    );
  }
  return charts;
}

/** The server's mean CPU and memory against clients, one line per mode (Fig. 4 and 5). */
async function serverResourceCharts(runs: readonly RunSummary[]): Promise<Chart[]> {
  const resources = runs
    .filter((run) => run.serverCpuMilli !== null && run.serverRssMiB !== null)
    .map((run) => ({ mode: runLabel(run), clients: run.clients, cpu: run.serverCpuMilli!.mean, rss: run.serverRssMiB!.mean }));
  if (resources.length === 0) return [];
  const charts: Chart[] = [];
  for (const [field, title, axis] of [
    ['cpu', 'Server CPU against clients', 'mean CPU (milli-CPU)'],
    ['rss', 'Server memory against clients', 'mean RSS (MiB)'],
  ] as const) {
    charts.push(
      await render(`server-${field}`, title, {
        $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
        width: 560,
        height: 260,
        title,
        data: { values: resources },
        mark: { type: 'line', point: true },
        encoding: {
          x: { field: 'clients', type: 'quantitative', title: 'clients' },
          y: { field, type: 'quantitative', title: axis },
          color: { field: 'mode', type: 'nominal', title: 'mode' },
        },
      }),
    );
  }
  return charts;
}

/** Memory per connection by kind of connection and state: the publisher's RSS and one side's TCP buffers (KiB). */
async function memoryPerConnectionChart(rows: readonly ConnectionMemoryRow[]): Promise<Chart[]> {
  const values = rows.flatMap((row) =>
    (
      [
        ['idle', row.idle],
        ['active (peak)', row.active],
        ['idle, slope across sizes', row.idleSlope],
      ] as const
    ).flatMap(([state, figures]) =>
      figures === null
        ? []
        : [
            { connection: `${row.connection} · ${state}`, measure: 'publisher RSS', kib: figures.serverRssKiB },
            ...(figures.tcpKernelKiBPerSide === null ? [] : [{ connection: `${row.connection} · ${state}`, measure: 'TCP buffers (one side, est.)', kib: figures.tcpKernelKiBPerSide }]),
          ],
    ),
  );
  if (values.length === 0) return [];
  return [
    await render('memory-per-connection', 'Memory per connection', {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      width: 560,
      height: { step: 14 },
      title: 'Memory per connection (KiB): the publisher’s RSS and its side of the TCP buffers',
      data: { values },
      mark: { type: 'bar' },
      encoding: {
        y: { field: 'connection', type: 'nominal', title: '', sort: null, axis: { labelLimit: 480 } },
        x: { field: 'kib', type: 'quantitative', title: 'KiB per connection' },
        color: { field: 'measure', type: 'nominal', title: '', legend: { labelLimit: 260, orient: 'bottom' } },
        yOffset: { field: 'measure' },
      },
    }),
  ];
}

/** Connected clients over each run: the ramp, then the measurement. */
async function connectedClientsChart(runs: readonly RunSummary[]): Promise<Chart[]> {
  const connected = runs.flatMap((run) => run.timeline.map((point) => ({ run: `${runLabel(run)}, ${run.clients}`, ...point })));
  if (connected.length === 0) return [];
  return [
    await render('connected-clients', 'Connected clients over time', {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      width: 560,
      height: 220,
      title: 'Connected clients over time (ramp, then measurement)',
      data: { values: connected },
      mark: { type: 'line' },
      encoding: {
        x: { field: 'seconds', type: 'quantitative', title: 'seconds since the start of the run' },
        y: { field: 'connected', type: 'quantitative', title: 'connected clients' },
        color: { field: 'run', type: 'nominal', title: 'run' },
      },
    }),
  ];
}

/** p50 and p99 of each element's latency, warm-up elements marked apart. */
async function perElementChart(runs: readonly RunSummary[]): Promise<Chart[]> {
  const elements = runs.flatMap((run) =>
    run.perElement.flatMap((row) =>
      (['p50', 'p99'] as const).map((statistic) => ({ run: `${runLabel(run)}, ${run.clients}`, statistic, seconds: row.generatedAtSeconds, latencyMs: row[statistic], warmup: row.warmup ? 'warm-up' : 'measured' })),
    ),
  );
  if (elements.length === 0) return [];
  return [
    await render('per-element', 'Latency per element', {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      width: 560,
      height: 260,
      title: 'Latency per element (p50 and p99; point shape: warm-up, before every client was connected, or measured)',
      data: { values: elements },
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'seconds', type: 'quantitative', title: 'element generated (s after the ramp)' },
        y: { field: 'latencyMs', type: 'quantitative', title: 'latency (ms)' },
        color: { field: 'run', type: 'nominal', title: 'run' },
        strokeDash: { field: 'statistic', type: 'nominal', title: 'percentile' },
        shape: { field: 'warmup', type: 'nominal', title: '' },
      },
    }),
  ];
}

/** Cores to serve each planned stream, per transport (and MAL of 1, 5 and 30 s for polling). */
async function capacityPlanChart(plan: CapacityPlan): Promise<Chart[]> {
  const planned = plan.rows
    .filter((row) => row.cores !== null && (row.malSeconds === null || row.malSeconds === 1 || row.malSeconds === 5 || row.malSeconds === 30))
    .map((row) => ({
      transport: `${row.transport}${row.malSeconds === null ? '' : ` (MAL ${row.malSeconds} s)`}`,
      stream: `${row.clients.toLocaleString('en')} clients, an element every ${row.intervalSeconds} s`,
      cores: row.cores,
    }));
  if (planned.length === 0) return [];
  return [
    await render('capacity-plan', 'Capacity plan: cores', {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      width: 560,
      height: 220,
      title: 'Cores to serve a stream, from this run’s costs (log scale)',
      data: { values: planned },
      mark: { type: 'bar' },
      encoding: {
        y: { field: 'transport', type: 'nominal', title: '' },
        x: { field: 'cores', type: 'quantitative', title: 'cores', scale: { type: 'symlog' } },
        color: { field: 'stream', type: 'nominal', title: '' },
        yOffset: { field: 'stream' },
      },
    }),
  ];
}

/** Polling users servable at each maximum acceptable latency (the study's formula 1). */
function malChart(table: ReadonlyArray<{ malSeconds: number; maxUsers: number }>): Promise<Chart> {
  return render('mal', 'Polling users servable by maximum acceptable latency (formula 1)', {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 560,
    height: 220,
    title: 'Polling users servable at each MAL (formula 1, measured capacity)',
    data: { values: table.map((row) => ({ mal: `${row.malSeconds} s`, order: row.malSeconds, users: row.maxUsers })) },
    mark: { type: 'bar' },
    encoding: {
      x: { field: 'mal', type: 'ordinal', title: 'maximum acceptable latency', sort: { field: 'order' } },
      y: { field: 'users', type: 'quantitative', title: 'users' },
    },
  });
}

/** A reliability scenario's measurements over time: one line per measured quantity. */
export function seriesChart(scenario: string, series: Series): Promise<Chart> {
  return render(`${scenario}-${series.name}`, series.title, {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 640,
    height: 280,
    title: `${scenario}: ${series.title}`,
    data: { values: series.points.map((point) => ({ ...point, minutes: point.seconds / 60 })) },
    mark: { type: 'line' },
    encoding: {
      x: { field: 'minutes', type: 'quantitative', title: 'minutes since the scenario began' },
      y: { field: 'value', type: 'quantitative', title: series.unit },
      color: { field: 'line', type: 'nominal', title: '' },
    },
  });
}
