import { LatencyRecorder } from '@rdf-stream/client';
import { describe, expect, it } from 'vitest';
import { type FleetClient, UpdateRecorder } from '../../../src/fleet/update-recorder.js';

const T0 = Date.parse('2026-11-25T12:00:00Z');
const element = (seq: number, generatedAtMs: number) =>
  `@prefix prov: <http://www.w3.org/ns/prov#>.\n<http://h/streams/s/elements/ep-${seq}> prov:generatedAtTime "${new Date(generatedAtMs).toISOString()}"^^xsd:dateTime.\n`;
const client = (connectedAt: number | undefined): FleetClient => ({ connectedAt, seqs: [] });

describe('UpdateRecorder', () => {
  it('records each element once per client, with its latency, in a histogram per element', () => {
    const updates = new UpdateRecorder(T0, 0);
    const a = client(T0);
    const b = client(T0);
    updates.record(a, element(1, T0 + 1_000), T0 + 1_040);
    updates.record(a, element(1, T0 + 1_000), T0 + 1_900);
    updates.record(b, element(1, T0 + 1_000), T0 + 1_100);
    // A poller's answer is recorded from its bytes, as the same element in text.
    expect(updates.record(b, Buffer.from(element(2, T0 + 2_000)), T0 + 2_010)).toEqual({ seq: 2, generatedAtMs: T0 + 2_000 });
    updates.record(b, element(2, T0 + 2_000), T0 + 2_020);
    expect(updates.updates).toBe(3);
    expect(a.seqs).toEqual([1]);
    const [first, second] = updates.elements();
    expect(first).toMatchObject({ seq: 1, generatedAtMs: T0 + 1_000 });
    const merged = new LatencyRecorder();
    merged.merge(first!.histogram);
    const latencies = merged.summary();
    expect(latencies.count).toBe(2);
    expect(latencies.max).toBeCloseTo(100, 0);
    expect(second).toMatchObject({ seq: 2 });
  });

  it('does not measure elements from before the ramp ended or before the client was first answered', () => {
    const updates = new UpdateRecorder(T0, 0);
    const late = client(T0 + 5_000);
    expect(updates.record(client(T0), element(1, T0 - 1), T0 + 10)).toEqual({ seq: 1, generatedAtMs: T0 - 1 });
    updates.record(late, element(2, T0 + 4_000), T0 + 5_000);
    updates.record(client(undefined), element(3, T0 + 6_000), T0 + 6_010);
    expect(updates.updates).toBe(0);
    expect(updates.elements()).toEqual([]);
  });

  it("never measures the state a poller found, and notes it received when it is stamped with the millisecond of the first answer", () => {
    const updates = new UpdateRecorder(T0, 0);
    const poller = client(T0 + 5_000);
    // Generated before the first answer: not an update the poller should have, not noted.
    expect(updates.found(poller, element(1, T0 + 4_000))).toEqual({ seq: 1, generatedAtMs: T0 + 4_000 });
    expect(poller.seqs).toEqual([]);
    // Served as it was generated, in the millisecond of the first answer: received, still not measured.
    updates.found(poller, Buffer.from(element(2, T0 + 5_000)));
    expect(poller.seqs).toEqual([2]);
    expect(updates.updates).toBe(0);
    expect(updates.elements()).toEqual([]);
  });

  it('keeps a sample of raw latencies at its rate, and ignores what carries no stamp', () => {
    let draw = 0;
    const updates = new UpdateRecorder(T0, 0.5, () => [0.1, 0.9][draw++ % 2]!);
    const c = client(T0);
    updates.record(c, element(1, T0 + 1_000), T0 + 1_020);
    updates.record(c, element(2, T0 + 2_000), T0 + 2_030);
    expect(updates.record(c, 'not an element', T0 + 3_000)).toBeUndefined();
    expect(updates.samples).toEqual([[1, 20]]);
  });
});
