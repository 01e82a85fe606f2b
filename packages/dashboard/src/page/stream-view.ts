import { subscribe, type Subscription, type TransportName } from '@rdf-stream/client/live';
import { facts, formatDuration, formatMs, h } from './dom.js';
import { LatencyPanel } from './latency-panel.js';
import { LatestTable } from './latest-table.js';
import { pageObservations } from './observations.js';
import { CHART_WINDOW_MS, PropertyCharts } from './property-charts.js';
import { QueryPanel } from './query-panel.js';
import { readDescriptor, type StreamDescriptor } from './rdf-documents.js';

const transportLabels: Readonly<Record<TransportName, string>> = {
  sse: 'Server-Sent Events',
  websocket: 'WebSocket',
  poll: 'Smart polling',
  'long-poll': 'Long-polling',
};

/**
 * One stream, live: its latest values, charts, latency, connection and a continuous query.
 * Opening it replays the last minutes of history (so the charts are not empty at load), then
 * goes live with no gap; switching the transport resumes after the last element shown.
 */
export class StreamView {
  readonly element: HTMLElement;
  readonly #streamIri: string;
  #transport: TransportName = 'sse';
  #controller: AbortController | undefined;
  #lastSeq: number | undefined;
  #updates = 0;
  #reconnects = 0;
  #gaps = 0;
  #offsetMs = 0;
  readonly #latest = new LatestTable(() => Date.now() + this.#offsetMs);
  readonly #charts = new PropertyCharts();
  readonly #latency = new LatencyPanel();
  readonly #query: QueryPanel;
  readonly #fields = {
    state: h('dd', { id: 'connection-state' }, 'connecting'),
    transport: h('dd', { id: 'connection-transport' }, '–'),
    updates: h('dd', { id: 'update-count' }, '0'),
    lastSeq: h('dd', { id: 'last-seq' }, '–'),
    offset: h('dd', { id: 'clock-offset' }, '–'),
    reconnects: h('dd', { id: 'reconnect-count' }, '0'),
    gaps: h('dd', { id: 'gap-count' }, '0'),
    lastEvent: h('dd', { id: 'last-event' }, '–'),
  };
  readonly #links = h('ul', { id: 'interfaces' });
  readonly #interval = h('dd', {}, '–');

  constructor(streamIri: string) {
    this.#streamIri = streamIri;
    this.#query = new QueryPanel(streamIri, () => this.#transport);
    const picker = h('select', { id: 'transport' }, ...Object.entries(transportLabels).map(([value, label]) => h('option', { value }, label)));
    picker.addEventListener('change', () => this.switchTransport(picker.value as TransportName));
    this.element = h(
      'div',
      {},
      h(
        'div',
        { class: 'panels' },
        h(
          'section',
          { 'aria-labelledby': 'connection-heading' },
          h('h2', { id: 'connection-heading' }, 'Connection'),
          h('p', {}, h('label', { for: 'transport' }, 'Transport '), picker),
          facts([
            ['State', this.#fields.state],
            ['Transport in use', this.#fields.transport],
            ['Updates', this.#fields.updates],
            ['Last sequence number', this.#fields.lastSeq],
            ['Clock offset to server', this.#fields.offset],
            ['Reconnections', this.#fields.reconnects],
            ['Gaps', this.#fields.gaps],
            ['Last connection event', this.#fields.lastEvent],
            ['Interval', this.#interval],
          ]),
        ),
        this.#latency.element,
      ),
      h('section', { 'aria-labelledby': 'latest-heading' }, h('h2', { id: 'latest-heading' }, 'Latest observations'), this.#latest.element),
      h('section', { 'aria-labelledby': 'charts-heading' }, h('h2', { id: 'charts-heading' }, `The last ${CHART_WINDOW_MS / 60_000} minutes`), this.#charts.element),
      this.#query.element,
      h('section', { 'aria-labelledby': 'interfaces-heading' }, h('h2', { id: 'interfaces-heading' }, 'Interfaces of this stream'), this.#links),
    );
    setInterval(() => this.#latest.tick(), 1_000);
  }

  /** Reads the descriptor, then subscribes (history first) and starts the query. */
  async start(signal?: AbortSignal): Promise<StreamDescriptor> {
    const descriptor = await readDescriptor(this.#streamIri, signal);
    this.#showInterfaces(descriptor);
    this.#interval.textContent = descriptor.interval ?? 'irregular';
    this.#run(new Date(Date.now() - CHART_WINDOW_MS));
    this.#query.start();
    return descriptor;
  }

  switchTransport(transport: TransportName): void {
    this.#transport = transport;
    // Resume after the last element shown: the history fills what came meanwhile, no gap, no duplicate.
    this.#run(this.#lastSeq === undefined ? new Date(Date.now() - CHART_WINDOW_MS) : this.#lastSeq + 1);
  }

  #run(from: number | Date): void {
    this.#controller?.abort();
    const controller = new AbortController();
    this.#controller = controller;
    const subscription = subscribe(this.#streamIri, { transport: this.#transport, from, signal: controller.signal });
    this.#fields.state.textContent = 'connecting';
    this.#fields.transport.textContent = transportLabels[this.#transport];
    void this.#consume(subscription, controller);
  }

  async #consume(subscription: Subscription, controller: AbortController): Promise<void> {
    try {
      for await (const event of subscription) {
        if (controller.signal.aborted) return;
        this.#showOffset(subscription);
        switch (event.type) {
          case 'update': {
            this.#fields.state.textContent = event.replayed ? 'replaying history' : 'live';
            const generatedAtMs = event.generatedAt?.getTime() ?? event.receivedAt.getTime();
            if (event.seq !== undefined && this.#lastSeq !== undefined && event.seq > this.#lastSeq + 1) this.#charts.markGap();
            if (event.seq !== undefined) this.#lastSeq = event.seq;
            const observations = pageObservations(event, generatedAtMs);
            this.#latest.update(observations, !event.replayed);
            this.#charts.add(generatedAtMs, observations);
            if (!event.replayed) this.#latency.record(event.latencyMs);
            this.#updates++;
            this.#fields.updates.textContent = String(this.#updates);
            this.#fields.lastSeq.textContent = event.seq === undefined ? '–' : String(event.seq);
            break;
          }
          case 'gap':
            this.#gaps++;
            this.#fields.gaps.textContent = String(this.#gaps);
            this.#fields.lastEvent.textContent = `gap (${event.reason}) after ${event.afterSeq ?? '?'}, resumed at ${event.resumedAtSeq ?? '?'}`;
            this.#charts.markGap();
            break;
          case 'reconnect':
            this.#reconnects++;
            this.#fields.reconnects.textContent = String(this.#reconnects);
            this.#fields.state.textContent = `reconnecting in ${formatDuration(event.delayMs)}`;
            this.#fields.lastEvent.textContent = `reconnect: ${event.reason}`;
            break;
          case 'error':
            this.#fields.lastEvent.textContent = `an element could not be decoded: ${event.error.message}`;
            break;
        }
      }
      if (!controller.signal.aborted) this.#fields.state.textContent = 'ended';
    } catch (error) {
      if (!controller.signal.aborted) this.#fields.state.textContent = `stopped: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  #showOffset(subscription: Subscription): void {
    const offset = subscription.clockOffset;
    if (offset === undefined) return;
    this.#offsetMs = offset.offsetMs;
    this.#fields.offset.textContent = `${formatMs(offset.offsetMs)} ± ${formatMs(offset.uncertaintyMs)}`;
  }

  #showInterfaces(descriptor: StreamDescriptor): void {
    const items = [
      h('li', {}, h('a', { href: `${this.#streamIri}?format=turtle` }, 'Descriptor'), ' (Turtle; also ', h('a', { href: `${this.#streamIri}?format=jsonld` }, 'JSON-LD'), ')'),
      ...descriptor.interfaces.map((entry) => {
        const url = new URL(entry.url);
        // One URL per format: the latest and history documents negotiate, a link cannot send Accept.
        const format = /#(?:latest|history)-(\w+)$/.exec(entry.title) ?? /\((\w+)\)/.exec(entry.title);
        if (format?.[1] !== undefined && !url.searchParams.has('format')) url.searchParams.set('format', format[1]);
        return h('li', {}, h('a', { href: url.href }, entry.title), ` — ${entry.mediaType}`);
      }),
    ];
    this.#links.replaceChildren(...items);
  }
}
