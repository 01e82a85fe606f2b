import { formatDuration, h, localName } from './dom.js';
import type { PageObservation } from './observations.js';

interface Row {
  readonly element: HTMLTableRowElement;
  readonly value: HTMLTableCellElement;
  readonly change: HTMLTableCellElement;
  readonly observedAt: HTMLTimeElement;
  readonly age: HTMLTableCellElement;
  observation: PageObservation;
}

/**
 * The latest observation per feature of interest and property: value, unit, phenomenon time,
 * and the value's age, ticking. A changed value is highlighted and says how it changed in
 * words (readable without colour).
 */
export class LatestTable {
  readonly element: HTMLElement;
  readonly #body = h('tbody');
  readonly #rows = new Map<string, Row>();
  readonly #serverNow: () => number;

  constructor(serverNow: () => number) {
    this.#serverNow = serverNow;
    this.element = h(
      'table',
      { id: 'latest-table' },
      h('caption', { class: 'muted' }, 'Latest value per feature of interest; a changed row is marked “changed”.'),
      h(
        'thead',
        {},
        h('tr', {}, ...['Feature of interest', 'Property', 'Value', 'Unit', 'Change', 'Observed at', 'Age'].map((name) => h('th', { scope: 'col' }, name))),
      ),
      this.#body,
    );
  }

  get size(): number {
    return this.#rows.size;
  }

  /** Shows an element's observations; `live` marks changes (a replayed history does not flash). */
  update(observations: readonly PageObservation[], live: boolean): void {
    for (const row of this.#rows.values()) row.element.classList.remove('changed');
    for (const observation of observations) {
      const key = `${observation.featureOfInterest} ${observation.observedProperty}`;
      const row = this.#rows.get(key) ?? this.#add(key, observation);
      const previous = row.observation.value;
      row.observation = observation;
      row.value.textContent = String(observation.value);
      row.observedAt.textContent = new Date(observation.observedAt).toLocaleTimeString();
      row.observedAt.setAttribute('datetime', new Date(observation.observedAt).toISOString());
      const changed = previous !== observation.value;
      row.change.textContent = !changed ? '' : typeof previous === 'number' && typeof observation.value === 'number' ? describeChange(observation.value - previous) : 'changed';
      if (changed && live) row.element.classList.add('changed');
    }
    this.tick();
  }

  /** Refreshes the ages (called every second). */
  tick(): void {
    const now = this.#serverNow();
    for (const row of this.#rows.values()) row.age.textContent = formatDuration(Math.max(0, now - row.observation.observedAt));
  }

  #add(key: string, observation: PageObservation): Row {
    const cells = {
      value: h('td', { class: 'number' }),
      change: h('td'),
      observedAt: h('time'),
      age: h('td', { class: 'number' }),
    };
    const element = h(
      'tr',
      {},
      h('th', { scope: 'row', title: observation.featureOfInterest }, observation.label ?? localName(observation.featureOfInterest)),
      h('td', { title: observation.observedProperty }, localName(observation.observedProperty)),
      cells.value,
      h('td', {}, observation.unit === undefined ? '' : localName(observation.unit)),
      cells.change,
      h('td', {}, cells.observedAt),
      cells.age,
    );
    const row: Row = { element, ...cells, observation };
    this.#rows.set(key, row);
    // Kept in order of feature, then property: a new feature does not shuffle the rows.
    const keys = [...this.#rows.keys()].sort();
    const next = keys[keys.indexOf(key) + 1];
    this.#body.insertBefore(element, next === undefined ? null : (this.#rows.get(next)?.element ?? null));
    return row;
  }
}

/** “changed: up 3”, “changed: down 1.5” — the direction in words. */
function describeChange(delta: number): string {
  const amount = Number.isInteger(delta) ? String(Math.abs(delta)) : Math.abs(delta).toPrecision(3);
  return delta > 0 ? `changed: up ${amount}` : delta < 0 ? `changed: down ${amount}` : 'changed';
}
