import { describe, expect, it } from 'vitest';
import { CountWindowOperator } from '../../../src/window/count-window-operator.js';

const bounds = (windows: Array<{ start: number; end: number; items: readonly string[] }>) =>
  windows.map((window) => [window.start, window.end, window.items.join(',')]);

describe('CountWindowOperator', () => {
  it('tumbling count windows', () => {
    const operator = new CountWindowOperator<string>({ kind: 'count', size: 2, step: 2 });
    const closed = ['a', 'b', 'c', 'd', 'e'].flatMap((item) => operator.push(item));
    expect(bounds(closed)).toEqual([
      [1, 3, 'a,b'],
      [3, 5, 'c,d'],
    ]);
  });

  it('sliding count windows: the last 3, every 1', () => {
    const operator = new CountWindowOperator<string>({ kind: 'count', size: 3, step: 1 });
    const closed = ['a', 'b', 'c', 'd'].flatMap((item) => operator.push(item));
    expect(bounds(closed)).toEqual([
      [1, 4, 'a,b,c'],
      [2, 5, 'b,c,d'],
    ]);
  });
});
