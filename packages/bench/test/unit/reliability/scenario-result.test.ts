import { afterEach, describe, expect, it, vi } from 'vitest';
import { between, check, progress, timedCheck } from '../../../src/reliability/scenario-result.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('check', () => {
  it('records what must hold, whether it held, and what was observed, as text', () => {
    expect(check('no subscriber lost an update', true, 0)).toEqual({ what: 'no subscriber lost an update', holds: true, observed: '0', timed: false });
    expect(check('RSS floor flat', false, '+12 MiB/h')).toEqual({ what: 'RSS floor flat', holds: false, observed: '+12 MiB/h', timed: false });
  });
});

describe('timedCheck', () => {
  it('is a check marked as a bound on time (asserted only by pnpm test:reliability)', () => {
    expect(timedCheck('restart within 5 s', false, 7.25)).toEqual({ what: 'restart within 5 s', holds: false, observed: '7.25', timed: true });
  });
});

describe('between', () => {
  it('maps Math.random\'s [0, 1) linearly onto min … max', () => {
    const random = vi.spyOn(Math, 'random');
    random.mockReturnValueOnce(0);
    expect(between(10, 20)).toBe(10);
    random.mockReturnValueOnce(0.5);
    expect(between(10, 20)).toBe(15);
    random.mockReturnValueOnce(1 - Number.EPSILON);
    const high = between(10, 20);
    expect(high).toBeLessThanOrEqual(20);
    expect(high).toBeGreaterThan(19.99);
    random.mockReturnValueOnce(0.25);
    expect(between(-4, 4)).toBe(-2);
  });
});

describe('progress', () => {
  it('writes one line naming its scenario to stderr, leaving stdout to the table', () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const stdout = vi.spyOn(process.stdout, 'write');
    progress('churn', '1000 connections opened');
    expect(stderr).toHaveBeenCalledWith('[churn] 1000 connections opened\n');
    expect(stdout).not.toHaveBeenCalled();
  });
});
