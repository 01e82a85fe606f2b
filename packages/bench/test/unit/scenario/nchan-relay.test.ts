import { expect, it } from 'vitest';
import { elementStamp } from '../../../src/fleet/timestamp.js';
import { restamp } from '../../../src/scenario/nchan-relay.js';

it('sets the element\'s prov:generatedAtTime to the moment given, leaving its size and sequence number as they were', () => {
  const turtle = '<http://127.0.0.1/streams/parking/elements/k3x9-42> prov:generatedAtTime "2026-11-26T13:00:00.123Z"^^xsd:dateTime .\n<a> <b> "c" .\n';
  const atMs = Date.parse('2026-11-26T13:00:00.789Z');
  const message = restamp(turtle, atMs);
  expect(message.length).toBe(turtle.length);
  expect(elementStamp(message)).toEqual({ seq: 42, generatedAtMs: atMs });
  expect(message.split('\n').slice(1)).toEqual(turtle.split('\n').slice(1));
});
