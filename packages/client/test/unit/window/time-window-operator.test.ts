import { describe, expect, it } from 'vitest';
import { TimeWindowOperator } from '../../../src/window/time-window-operator.js';

const bounds = (windows: Array<{ start: number; end: number; items: readonly string[] }>) =>
  windows.map((window) => [window.start, window.end, window.items.join(',')]);

describe('TimeWindowOperator', () => {
  it('tumbling: each element in exactly one window, closed when event time passes its end', () => {
    const operator = new TimeWindowOperator<string>({ kind: 'time', rangeMs: 10, stepMs: 10 });
    expect(operator.push(1, 'a')).toEqual([]);
    expect(operator.push(9, 'b')).toEqual([]);
    expect(bounds(operator.push(10, 'c'))).toEqual([[0, 10, 'a,b']]);
    expect(bounds(operator.push(25, 'd'))).toEqual([[10, 20, 'c']]);
    expect(bounds(operator.flush())).toEqual([[20, 30, 'd']]);
  });

  it('sliding: RANGE 30 STEP 10 puts an element in three windows', () => {
    const operator = new TimeWindowOperator<string>({ kind: 'time', rangeMs: 30, stepMs: 10 });
    const closed = [...operator.push(5, 'a'), ...operator.push(15, 'b'), ...operator.push(25, 'c'), ...operator.push(45, 'd')];
    expect(bounds(closed)).toEqual([
      [-20, 10, 'a'],
      [-10, 20, 'a,b'],
      [0, 30, 'a,b,c'],
      [10, 40, 'b,c'],
    ]);
  });

  it('emits empty windows when event time moves on without elements', () => {
    const operator = new TimeWindowOperator<string>({ kind: 'time', rangeMs: 10, stepMs: 10 });
    operator.push(1, 'a');
    expect(bounds(operator.push(35, 'b'))).toEqual([
      [0, 10, 'a'],
      [10, 20, ''],
      [20, 30, ''],
    ]);
  });

  it('counts, and does not use, an element later than the watermark allows', () => {
    const operator = new TimeWindowOperator<string>({ kind: 'time', rangeMs: 10, stepMs: 10 });
    operator.push(1, 'a');
    operator.push(12, 'b');
    expect(operator.push(3, 'late')).toEqual([]);
    expect(operator.stats.late).toBe(1);
    expect(bounds(operator.flush())).toEqual([[10, 20, 'b']]);
  });

  it('with allowed lateness, a window waits, and an out-of-order element still counts', () => {
    const operator = new TimeWindowOperator<string>({ kind: 'time', rangeMs: 10, stepMs: 10 }, { allowedLatenessMs: 5 });
    operator.push(1, 'a');
    expect(operator.push(12, 'b')).toEqual([]); // watermark 7 < 10
    expect(operator.push(8, 'c')).toEqual([]); // out of order, still in time
    expect(bounds(operator.push(16, 'd'))).toEqual([[0, 10, 'a,c']]);
    expect(operator.stats.late).toBe(0);
  });

  it('bounds empty windows after a jump in event time, counting those it skips', () => {
    const operator = new TimeWindowOperator<string>({ kind: 'time', rangeMs: 10, stepMs: 10 }, { maxConsecutiveEmptyWindows: 2 });
    operator.push(1, 'a');
    const closed = operator.push(1_000, 'b');
    expect(bounds(closed)).toEqual([
      [0, 10, 'a'],
      [980, 990, ''],
      [990, 1000, ''],
    ]);
    expect(operator.stats.skippedEmptyWindows).toBe(97);
  });

  it('start: the first window ends at the given time and holds past elements; later windows follow every STEP', () => {
    const operator = new TimeWindowOperator<string>({ kind: 'time', rangeMs: 30, stepMs: 10 });
    operator.start(1_005);
    // Elements stamped in the past, as a replayed history is: in the first window, none late.
    expect(operator.push(976, 'a')).toEqual([]);
    expect(operator.push(1_004, 'b')).toEqual([]);
    expect(bounds(operator.advance(1_005))).toEqual([[975, 1_005, 'a,b']]);
    expect(bounds(operator.advance(1_015))).toEqual([[985, 1_015, 'b']]);
    expect(operator.stats.late).toBe(0);
  });

  it('start: the first window closes on the clock even without any element', () => {
    const operator = new TimeWindowOperator<string>({ kind: 'time', rangeMs: 10, stepMs: 10 });
    operator.start(105);
    expect(bounds(operator.advance(104))).toEqual([]);
    expect(bounds(operator.advance(105))).toEqual([[95, 105, '']]);
    expect(() => operator.start(200)).toThrow(/started already/);
  });

  it('holds at most maxBufferedItems elements, counting the overflow', () => {
    const operator = new TimeWindowOperator<string>({ kind: 'time', rangeMs: 100, stepMs: 100 }, { maxBufferedItems: 2 });
    operator.push(1, 'a');
    operator.push(2, 'b');
    operator.push(3, 'c');
    expect(operator.stats.overflow).toBe(1);
    expect(bounds(operator.flush())).toEqual([[0, 100, 'a,b']]);
  });
});
