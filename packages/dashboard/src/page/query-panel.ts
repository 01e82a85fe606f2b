import type { TransportName } from '@rdf-stream/client/live';
import type { QueryCommand, QueryReport, QueryResultView } from './query-messages.js';
import { h } from './dom.js';
import exampleQuery from '../../../client/examples/average-free-spaces.rq';

/** The client's example (average free spaces over 30 s, every 10 s), aimed at this stream. */
export function exampleQueryFor(streamIri: string): string {
  return exampleQuery.replace(/ON <[^>]+>/, `ON <${streamIri}>`);
}

/**
 * An RSP-QL query evaluated by the client library (Comunica over each window) in a Web Worker,
 * its result shown per window. The worker subscribes to the query's streams itself and posts
 * back rows of strings: the page's main thread only renders them, so that an evaluation never
 * delays the updates the page shows. The worker (with the query engine) is started on first use.
 */
export class QueryPanel {
  readonly element: HTMLElement;
  readonly #text: HTMLTextAreaElement;
  readonly #button = h('button', { type: 'submit', id: 'query-run' }, 'Run');
  readonly #status = h('p', { id: 'query-status', role: 'status' }, 'Not running.');
  readonly #result = h('div', { id: 'query-result', 'aria-live': 'polite' });
  readonly #transport: () => TransportName;
  #worker: Worker | undefined;
  /** The run whose reports are shown; reports of an earlier run (still in flight) are dropped. */
  #run = 0;
  #running = false;
  #results = 0;

  constructor(streamIri: string, transport: () => TransportName) {
    this.#transport = transport;
    this.#text = h('textarea', { id: 'query-text', rows: '12', spellcheck: 'false' });
    this.#text.value = exampleQueryFor(streamIri);
    const form = h('form', {}, h('label', { for: 'query-text' }, 'RSP-QL query'), this.#text, h('p', {}, this.#button));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (!this.#running) this.start();
      else this.stop('Stopped.');
    });
    this.element = h('section', { 'aria-labelledby': 'query-heading', id: 'query-panel' }, h('h2', { id: 'query-heading' }, 'Continuous query'), form, this.#status, this.#result);
  }

  start(): void {
    this.stop();
    this.#run++;
    this.#running = true;
    this.#button.textContent = 'Stop';
    this.#status.textContent = 'Loading the query engine…';
    this.#post({ type: 'start', run: this.#run, query: this.#text.value, transport: this.#transport() });
  }

  stop(message?: string): void {
    if (this.#running) this.#post({ type: 'stop', run: this.#run });
    this.#ended();
    if (message !== undefined) this.#status.textContent = message;
  }

  #post(command: QueryCommand): void {
    this.#worker ??= this.#startWorker();
    this.#worker.postMessage(command);
  }

  #startWorker(): Worker {
    const worker = new Worker(new URL(QUERY_WORKER_FILE, import.meta.url), { type: 'module', name: 'continuous query' });
    worker.addEventListener('message', (event: MessageEvent<QueryReport>) => this.#report(event.data));
    worker.addEventListener('error', (event) => {
      // The worker's script could not load or threw outside a run: no run can go on.
      event.preventDefault();
      this.#worker = undefined;
      this.#ended();
      this.#status.textContent = `The query engine could not start: ${event.message || 'its worker failed to load'}`;
    });
    return worker;
  }

  #report(report: QueryReport): void {
    if (report.run !== this.#run) return;
    switch (report.type) {
      case 'running':
        this.element.dataset['queryEngine'] = report.engine;
        this.#status.textContent = 'Running: filling the windows from the history, then one result per window.';
        break;
      case 'result':
        this.#show(report.result);
        break;
      case 'failed':
        this.#ended();
        this.#status.textContent = `The query failed: ${report.message}`;
        break;
      case 'ended':
        this.#ended();
        break;
    }
  }

  #ended(): void {
    this.#running = false;
    this.#button.textContent = 'Run';
  }

  #show(result: QueryResultView): void {
    this.#results++;
    const window = result.windows[0];
    const range = window === undefined ? '' : ` window ${new Date(window.start).toLocaleTimeString()}–${new Date(window.end).toLocaleTimeString()} (${window.elements} elements)`;
    this.#status.textContent = `Result ${this.#results}:${range}, evaluated in ${Math.round(result.evaluationMs)} ms.`;
    this.#result.dataset['results'] = String(this.#results);
    if (result.resultType === 'boolean') {
      this.#result.replaceChildren(h('p', {}, String(result.boolean)));
      return;
    }
    if (result.resultType === 'quads') {
      this.#result.replaceChildren(h('p', {}, `${result.quadCount} triples`));
      return;
    }
    const table = h(
      'table',
      { id: 'query-table' },
      h('thead', {}, h('tr', {}, ...result.variables.map((name) => h('th', { scope: 'col' }, `?${name}`)))),
      h('tbody', {}, ...result.rows.map((row) => h('tr', {}, ...result.variables.map((name) => h('td', {}, formatTerm(row[name])))))),
    );
    this.#result.replaceChildren(...(result.rows.length === 0 ? [table, h('p', {}, 'No rows in this window.')] : [table]));
  }
}

function formatTerm(value: string | undefined): string {
  if (value === undefined) return '';
  const number = Number(value);
  return value.trim() !== '' && Number.isFinite(number) && !Number.isInteger(number) ? number.toFixed(2) : value;
}
