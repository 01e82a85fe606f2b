import { describe, expect, it } from 'vitest';
import { defaults } from '../../../src/config/defaults.js';
import { elementQuads } from '../../../src/model/observation.js';
import { writeRdf } from '../../../src/render/render-element.js';
import { ParkingSimulator } from '../../../src/source/parking-simulator.js';
import { manualClock } from '../../../src/testing/manual-clock.js';

const streamIri = 'http://127.0.0.1:8080/streams/parking';

describe('ParkingSimulator', () => {
  it('is reproducible from its seed', () => {
    const a = new ParkingSimulator({ streamIri, facilities: 5, intervalMs: 5000, seed: 7 });
    const b = new ParkingSimulator({ streamIri, facilities: 5, intervalMs: 5000, seed: 7 });
    const c = new ParkingSimulator({ streamIri, facilities: 5, intervalMs: 5000, seed: 8 });
    const steps = (s: ParkingSimulator) => Array.from({ length: 20 }, () => s.step().map((o) => o.simpleResult));
    expect(steps(a)).toEqual(steps(b));
    expect(steps(a)).not.toEqual(steps(c));
  });

  it('walks: consecutive values are close and stay within capacity, unlike white noise', () => {
    const simulator = new ParkingSimulator({ streamIri, facilities: 10, intervalMs: 5000, seed: 1 });
    const series = Array.from({ length: 500 }, () => simulator.step().map((o) => o.simpleResult as number));
    for (let facility = 0; facility < 10; facility++) {
      const values = series.map((step) => step[facility] as number);
      expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
      const steps = values.slice(1).map((value, index) => Math.abs(value - (values[index] as number)));
      const meanStep = steps.reduce((sum, step) => sum + step, 0) / steps.length;
      const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
      const spread = Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / values.length);
      // For white noise the mean step is ~1.13 × the spread; a walk moves far less per step.
      expect(meanStep).toBeLessThan(0.8 * spread + 1);
      expect(new Set(values).size).toBeGreaterThan(3);
    }
  });

  it('mints one observation per facility with stable sensor and feature IRIs', () => {
    const simulator = new ParkingSimulator({ streamIri, facilities: 3, intervalMs: 5000, seed: 1 });
    const [first] = simulator.step();
    expect(first).toMatchObject({
      id: 'p01',
      sensor: `${streamIri}/sensors/p01`,
      featureOfInterest: `${streamIri}/facilities/p01`,
      observedProperty: 'http://vocab.datex.org/terms#parkingNumberOfVacantSpaces',
    });
    expect(simulator.step()).toHaveLength(3);
  });

  it('by default an element is about 5.2 kB of Turtle, as in the study', () => {
    const simulator = new ParkingSimulator({ streamIri, facilities: defaults.facilities, intervalMs: 5000, seed: 1 });
    const graph = `${streamIri}/elements/123456`;
    const turtle = writeRdf(elementQuads(graph, new Date(), simulator.step()), 'turtle');
    expect(Buffer.byteLength(turtle)).toBeGreaterThan(4_900);
    expect(Buffer.byteLength(turtle)).toBeLessThan(5_500);
  });

  it('emits at once, then on a fixed grid, skipping ticks missed while blocked', () => {
    const { clock, advanceTo } = manualClock(1_000_000);
    const emitted: number[] = [];
    const simulator = new ParkingSimulator({ streamIri, facilities: 1, intervalMs: 5000, seed: 1, clock });
    simulator.start((_observations, at) => emitted.push(at.getTime()));
    expect(emitted).toEqual([1_000_000]);
    advanceTo(1_010_000);
    expect(emitted).toEqual([1_000_000, 1_005_000, 1_010_000]);
    simulator.stop();
    advanceTo(1_100_000);
    expect(emitted).toHaveLength(3);
  });

  it('runs at fractions of a second: 250 ms (the 4 Hz of the wind-sensor study) on its grid', () => {
    const { clock, advanceTo } = manualClock(1_000_000);
    const emitted: number[] = [];
    const simulator = new ParkingSimulator({ streamIri, facilities: 1, intervalMs: 250, seed: 1, clock });
    simulator.start((_observations, at) => emitted.push(at.getTime()));
    advanceTo(1_001_000);
    expect(emitted).toEqual([1_000_000, 1_000_250, 1_000_500, 1_000_750, 1_001_000]);
    expect(simulator.expectedIntervalMs).toBe(250);
    simulator.stop();
  });
});
