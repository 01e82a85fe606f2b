import type { QueryResult, TransportName } from '@rdf-stream/client';
import { h } from './dom.js';
import exampleQuery from '../../../client/examples/average-free-spaces.rq';

/** The client's example (average free spaces over 30 s, every 10 s), aimed at this stream. */
export function exampleQueryFor(streamIri: string): string {
  return exampleQuery.replace(/ON <[^>]+>/, `ON <${streamIri}>`);
}

/**
 * An RSP-QL query evaluated in the page by the client library (Comunica over each window),
 * its result shown per window. The query engine is loaded on first use, so that the rest of
 * the page does not wait for it.
 */
export class QueryPanel {
  readonly element: HTMLElement;
  readonly #text: HTMLTextAreaElement;
  readonly #button = h('button', { type: 'submit', id: 'query-run' }, 'Run');
  readonly #status = h('p', { id: 'query-status', role: 'status' }, 'Not running.');
  readonly #result = h('div', { id: 'query-result', 'aria-live': 'polite' });
  readonly #transport: () => TransportName;
  #controller: AbortController | undefined;
  #results = 0;

  constructor(streamIri: string, transport: () => TransportName) {
    this.#transport = transport;
    this.#text = h('textarea', { id: 'query-text', rows: '12', spellcheck: 'false' });
    this.#text.value = exampleQueryFor(streamIri);
    const form = h('form', {}, h('label', { for: 'query-text' }, 'RSP-QL query'), this.#text, h('p', {}, this.#button));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (this.#controller === undefined) void this.start();
      else this.stop('Stopped.');
    });
    this.element = h('section', { 'aria-labelledby': 'query-heading' }, h('h2', { id: 'query-heading' }, 'Continuous query'), form, this.#status, this.#result);
  }

  async start(): Promise<void> {
    this.stop();
    const controller = new AbortController();
    this.#controller = controller;
    this.#button.textContent = 'Stop';
    this.#status.textContent = 'Loading the query engine…';
    try {
      const { runContinuousQuery } = await import('@rdf-stream/client');
      this.#status.textContent = 'Running: filling the windows from the history, then one result per window.';
      for await (const result of runContinuousQuery(this.#text.value, { signal: controller.signal, transport: this.#transport() })) {
        if (controller.signal.aborted) break;
        this.#show(result);
      }
    } catch (error) {
      if (!controller.signal.aborted) this.#status.textContent = `The query failed: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      if (this.#controller === controller) {
        this.#controller = undefined;
        this.#button.textContent = 'Run';
      }
    }
  }

  stop(message?: string): void {
    this.#controller?.abort();
    this.#controller = undefined;
    this.#button.textContent = 'Run';
    if (message !== undefined) this.#status.textContent = message;
  }

  #show(result: QueryResult): void {
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
      this.#result.replaceChildren(h('p', {}, `${result.quads?.length ?? 0} triples`));
      return;
    }
    const rows = result.bindings ?? [];
    const variables = [...new Set(rows.flatMap((row) => Object.keys(row)))];
    const table = h(
        'table',
        { id: 'query-table' },
        h('thead', {}, h('tr', {}, ...variables.map((name) => h('th', { scope: 'col' }, `?${name}`)))),
        h('tbody', {}, ...rows.map((row) => h('tr', {}, ...variables.map((name) => h('td', {}, formatTerm(row[name]?.value)))))),
      );
    this.#result.replaceChildren(...(rows.length === 0 ? [table, h('p', {}, 'No rows in this window.')] : [table]));
  }
}

function formatTerm(value: string | undefined): string {
  if (value === undefined) return '';
  const number = Number(value);
  return value.trim() !== '' && Number.isFinite(number) && !Number.isInteger(number) ? number.toFixed(2) : value;
}
