import { describe, expect, it } from 'vitest';
import { elementStamp } from '../../../src/fleet/timestamp.js';

const PROV = '@prefix prov: <http://www.w3.org/ns/prov#>.\n\n';
const element = (iri: string, generatedAt: string) => `${PROV}<${iri}> prov:generatedAtTime "${generatedAt}"^^xsd:dateTime.\n`;

describe('elementStamp', () => {
  it('reads the timestamp and sequence number from a real Turtle element', () => {
    const turtle = '@prefix prov: <http://www.w3.org/ns/prov#>.\n\n<http://127.0.0.1:8080/streams/parking/elements/demo2026ab-42> prov:generatedAtTime "2026-11-22T16:20:05.123Z"^^xsd:dateTime.\n';
    expect(elementStamp(turtle)).toEqual({ seq: 42, generatedAtMs: Date.parse('2026-11-22T16:20:05.123Z') });
    expect(elementStamp('garbage')).toBeUndefined();
  });

  it('reads an element IRI without an epoch, and an epoch made only of digits', () => {
    expect(elementStamp(element('http://h/streams/s/elements/7', '2026-01-01T00:00:00Z'))).toEqual({ seq: 7, generatedAtMs: Date.parse('2026-01-01T00:00:00Z') });
    expect(elementStamp(element('http://h/streams/s/elements/2026-7', '2026-01-01T00:00:00Z'))?.seq).toBe(7);
  });

  it('reads the element graph\'s timestamp among the other triples of the document', () => {
    const turtle = `${PROV}<http://h/streams/s/sensors/p1> a <http://www.w3.org/ns/sosa/Sensor>.\n<http://h/streams/s/elements/abc-3> prov:generatedAtTime "2026-11-22T16:20:05Z"^^xsd:dateTime.\n<http://h/streams/s/elements/abc-3#o1> <http://www.w3.org/ns/sosa/hasSimpleResult> 12.\n`;
    expect(elementStamp(turtle)).toEqual({ seq: 3, generatedAtMs: Date.parse('2026-11-22T16:20:05Z') });
  });

  it('gives nothing for a timestamp that is no date, or a subject that is no element', () => {
    expect(elementStamp(element('http://h/streams/s/elements/abc-3', 'yesterday'))).toBeUndefined();
    expect(elementStamp(element('http://h/streams/s/pages/3', '2026-01-01T00:00:00Z'))).toBeUndefined();
    expect(elementStamp(element('http://h/streams/s/elements/abc-x', '2026-01-01T00:00:00Z'))).toBeUndefined();
  });
});
