import { describe, expect, it } from 'vitest';
import {
  BYTES_PER_FACILITY,
  defaultPollIntervalMs,
  ELEMENT_OVERHEAD_BYTES,
  facilitiesForPayload,
} from '../../../src/scenario/bench-options.js';

describe('facilitiesForPayload', () => {
  it('sizes elements like the study (5.2 kB ≈ 13 facilities)', () => {
    expect(facilitiesForPayload(5_200)).toBe(12);
    expect(facilitiesForPayload(5_400)).toBe(13);
  });

  it('rounds to the nearest whole facility: half a facility more rounds up', () => {
    const thirteen = ELEMENT_OVERHEAD_BYTES + 13 * BYTES_PER_FACILITY;
    expect(facilitiesForPayload(thirteen)).toBe(13);
    const halfWay = ELEMENT_OVERHEAD_BYTES + 12.5 * BYTES_PER_FACILITY;
    expect(facilitiesForPayload(Math.ceil(halfWay))).toBe(13);
    expect(facilitiesForPayload(Math.floor(halfWay))).toBe(12);
  });

  it('gives at least one facility, however small the payload asked for', () => {
    expect(facilitiesForPayload(ELEMENT_OVERHEAD_BYTES)).toBe(1);
    expect(facilitiesForPayload(0)).toBe(1);
  });
});

describe('defaultPollIntervalMs', () => {
  it('is the study\'s 500 ms for a stream of an element every few seconds', () => {
    expect(defaultPollIntervalMs(5)).toBe(500);
    expect(defaultPollIntervalMs(1)).toBe(500);
  });

  it('is 0.6 × a shorter interval: 150 ms at 4 Hz, as the wind-sensor study\'s Δ', () => {
    expect(defaultPollIntervalMs(0.25)).toBe(150);
    expect(defaultPollIntervalMs(0.5)).toBe(300);
  });
});
