import { describe, expect, it } from 'vitest';
import { WIND_STUDY_ROWS } from '../../../src/analyze/wind-study.js';
import { studyCells, studyTable } from '../../../src/report/study-table.js';

const latency = (mean: number, p99: number) => ({ p50: mean, p90: p99, p99, max: p99, mean });
const run = (mode: 'poll' | 'sse' | 'long-poll' | 'websocket', clients: number, mean: number, extra: object = {}) => ({
  mode,
  clients,
  latencyMs: latency(mean, mean * 2),
  missedUpdates: 0,
  proxy: 'none' as const,
  ...extra,
});

describe('studyCells', () => {
  it('puts the study\'s sites first, then one row per client count of this run, with polling over WebSocket', () => {
    const { header, rows } = studyCells([run('websocket', 100, 4), run('sse', 100, 5), run('long-poll', 100, 8), run('poll', 100, 80, { pollStrategy: 'fixed' })]);
    expect(header).toEqual(['', 'WebSocket', 'SSE', 'long polling', 'polling', 'polling ÷ WebSocket']);
    expect(rows).toHaveLength(WIND_STUDY_ROWS.length + 1);
    expect(rows[0]).toEqual(['study: Edmonton, Canada (1 client)', '40.3', '–', '41.3', '151.3', '3.8']);
    expect(rows.at(-1)).toEqual(['this run: 100 clients', '4 (p99 8)', '5 (p99 10)', '8 (p99 16)', '80 (p99 160)', '20.0']);
  });

  it('leaves out the variants the study did not run (smart polling, gzip, a proxy), and says what a run missed', () => {
    const { rows } = studyCells([
      run('poll', 1000, 90, { pollStrategy: 'smart' }),
      run('sse', 1000, 9, { sseEncoding: 'gzip' }),
      run('long-poll', 1000, 9, { proxy: 'nginx' }),
      run('websocket', 1000, 6, { missedUpdates: 3 }),
    ]);
    expect(rows.at(-1)).toEqual(['this run: 1000 clients', '6 (p99 12), 3 missed', '–', '–', '–', '–']);
  });

  it('prints the table with the study\'s ratio and what differs in the set-up', () => {
    const text = studyTable([run('websocket', 100, 4)]);
    expect(text).toMatch(/Beside the wind-sensor study/);
    expect(text).toMatch(/polling 2\.3 to 4\.5 ×/);
    expect(text).toMatch(/loopback/);
  });
});
