import { describe, expect, it } from 'vitest';
import {
  BYTES_PER_FACILITY,
  CONNECTIONS_PER_SOURCE_ADDRESS,
  defaultPollIntervalMs,
  ELEMENT_OVERHEAD_BYTES,
  facilitiesForPayload,
  sourceAddresses,
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

describe('sourceAddresses', () => {
  it('spreads connections over several 127.0.0.x addresses beyond 20 000 per address', () => {
    expect(sourceAddresses(8_000)).toEqual(['127.0.0.1']);
    expect(sourceAddresses(25_000)).toEqual(['127.0.0.1', '127.0.0.2']);
  });

  it('fills an address up to CONNECTIONS_PER_SOURCE_ADDRESS exactly before taking the next', () => {
    expect(sourceAddresses(CONNECTIONS_PER_SOURCE_ADDRESS)).toEqual(['127.0.0.1']);
    expect(sourceAddresses(CONNECTIONS_PER_SOURCE_ADDRESS + 1)).toEqual(['127.0.0.1', '127.0.0.2']);
    expect(sourceAddresses(3 * CONNECTIONS_PER_SOURCE_ADDRESS)).toHaveLength(3);
    expect(sourceAddresses(3 * CONNECTIONS_PER_SOURCE_ADDRESS + 1)).toEqual(['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4']);
  });

  it('always gives one address, even for no clients', () => {
    expect(sourceAddresses(0)).toEqual(['127.0.0.1']);
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
