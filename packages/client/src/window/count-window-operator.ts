import type { ClosedWindow, CountWindowSpec } from './window-spec.js';

/**
 * Count-based windows: after every `step` elements, once `size` have arrived, the last `size`
 * elements form a window. `start`/`end` are the 1-based positions of its first and last element
 * (end exclusive).
 */
export class CountWindowOperator<T> {
  readonly #spec: CountWindowSpec;
  #buffer: T[] = [];
  #seen = 0;

  constructor(spec: CountWindowSpec) {
    if (!(Number.isInteger(spec.size) && spec.size > 0 && Number.isInteger(spec.step) && spec.step > 0)) {
      throw new RangeError('count windows need a positive integer size and step');
    }
    this.#spec = spec;
  }

  push(item: T): ClosedWindow<T>[] {
    const { size, step } = this.#spec;
    this.#seen++;
    this.#buffer.push(item);
    if (this.#buffer.length > size) this.#buffer.shift();
    if (this.#seen >= size && (this.#seen - size) % step === 0) {
      return [{ start: this.#seen - size + 1, end: this.#seen + 1, items: [...this.#buffer] }];
    }
    return [];
  }
}
