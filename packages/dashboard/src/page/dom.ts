/// <reference lib="dom" />

type Child = Node | string | number | undefined;

/** Creates an element with attributes (`class`, `id`, `aria-*`, …) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Readonly<Record<string, string>> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) if (child !== undefined) node.append(typeof child === 'number' ? String(child) : child);
  return node;
}

/** The last segment of an IRI (after `#` or `/`): a readable name when there is no label. */
export function localName(iri: string): string {
  const match = /[^/#]+$/.exec(iri.replace(/[/#]+$/, ''));
  return match === null ? iri : decodeURIComponent(match[0]);
}

/** `1.2 s`, `340 ms`, `2 min 5 s`: an age or a duration for people. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (Math.abs(ms) < 1_000) return `${Math.round(ms)} ms`;
  if (Math.abs(ms) < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1_000)} s`;
}

/** A latency in milliseconds with a precision that suits its size. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  return ms < 10 ? `${ms.toFixed(2)} ms` : ms < 100 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

/** A term list for facts: `<dl>` rows from pairs whose values are live `<dd>` elements. */
export function facts(rows: ReadonlyArray<readonly [string, HTMLElement]>): HTMLDListElement {
  const list = h('dl', { class: 'facts' });
  for (const [term, value] of rows) list.append(h('dt', {}, term), value);
  return list;
}
