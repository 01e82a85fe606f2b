import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PollTrace, pollTraceColumns } from '../../../src/fleet/poll-trace.js';

let directory: string | undefined;
afterEach(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  directory = undefined;
});

describe('PollTrace', () => {
  it('writes one CSV row per request, in the order recorded, unknown times as NaN', () => {
    directory = mkdtempSync(join(tmpdir(), 'poll-trace-'));
    const trace = new PollTrace();
    trace.record(3, 1_000, 1_040, 304, false, 500, Number.NaN);
    trace.record(3, 1_040, 1_290, 200, true, 500, 1_010);
    trace.write(directory);
    const lines = readFileSync(join(directory, `poll-trace-${process.pid}.csv`), 'utf8').trim().split('\n');
    expect(lines).toEqual([pollTraceColumns.join(','), '3,1000,1040,304,0,500,NaN', '3,1040,1290,200,1,500,1010']);
  });

  it('makes the directory it is named when it does not exist yet', () => {
    directory = mkdtempSync(join(tmpdir(), 'poll-trace-'));
    const nested = join(directory, 'not', 'yet');
    new PollTrace().write(nested);
    expect(readFileSync(join(nested, `poll-trace-${process.pid}.csv`), 'utf8')).toBe(`${pollTraceColumns.join(',')}\n`);
  });
});
