import { describe, expect, it } from 'vitest';
import { elementStamp, elementStampIn } from '../../../src/fleet/timestamp.js';

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

describe('elementStampIn', () => {
  const documents = [
    '@prefix prov: <http://www.w3.org/ns/prov#>.\n\n<http://127.0.0.1:8080/streams/parking/elements/demo2026ab-42> prov:generatedAtTime "2026-11-22T16:20:05.123Z"^^xsd:dateTime.\n',
    'garbage',
    '',
    element('http://h/streams/s/elements/7', '2026-01-01T00:00:00Z'),
    element('http://h/streams/s/elements/abc-3', 'yesterday'),
    element('http://h/streams/s/pages/3', '2026-01-01T00:00:00Z'),
    element('http://h/streams/s/elements/abc-3', ''),
    // A predicate whose subject is no element, then the element's; a blank subject; a time with no closing quote.
    `${PROV}<http://h/streams/s/sensors/p1> prov:generatedAtTime "2026-01-01T00:00:00Z".\n<http://h/streams/s/elements/abc-9> prov:generatedAtTime "2026-01-02T00:00:00Z".\n`,
    `${PROV}_:b0 prov:generatedAtTime "2026-01-01T00:00:00Z".\n<http://h/streams/s/elements/abc-9> prov:generatedAtTime "2026-01-02T00:00:00Z".\n`,
    `${PROV}<http://h/streams/s/elements/abc-9> prov:generatedAtTime "2026-01-02T00:00:00Z`,
    // An element whose time is no date before one whose time is: the first match decides.
    `${element('http://h/streams/s/elements/abc-1', 'soon')}<http://h/streams/s/elements/abc-2> prov:generatedAtTime "2026-01-02T00:00:00Z".\n`,
    // Characters of several bytes before, in and after the stamp.
    `${PROV}<http://h/streams/s/sensors/température> a <http://h/Capteur>; <http://h/nom> "Zürich – 北".\n<http://h/streams/s/elements/é-5> prov:generatedAtTime "2026-01-03T00:00:00Z".\n<http://h/streams/s/elements/5> prov:generatedAtTime "2026-01-04T00:00:00Z".\n`,
  ];

  it('finds in the bytes of a document what elementStamp finds in its text', () => {
    for (const text of documents) expect(elementStampIn(Buffer.from(text, 'utf8')), text).toEqual(elementStamp(text));
  });

  it('reads the stamps it is given, and nothing of what lies around them', () => {
    expect(elementStampIn(Buffer.from(documents[0] as string))).toEqual({ seq: 42, generatedAtMs: Date.parse('2026-11-22T16:20:05.123Z') });
    expect(elementStampIn(Buffer.from(documents[7] as string))).toEqual({ seq: 9, generatedAtMs: Date.parse('2026-01-02T00:00:00Z') });
    expect(elementStampIn(Buffer.from(documents[10] as string))).toBeUndefined();
    expect(elementStampIn(Buffer.from(documents[11] as string))).toEqual({ seq: 5, generatedAtMs: Date.parse('2026-01-04T00:00:00Z') });
    // A body that is a view into a larger buffer (as an answer read off a socket is).
    const framed = Buffer.from(`HTTP/1.1 200 OK\r\n\r\n${documents[3] as string}<junk>`);
    const start = framed.indexOf('@prefix');
    expect(elementStampIn(framed.subarray(start, start + Buffer.byteLength(documents[3] as string)))).toEqual({ seq: 7, generatedAtMs: Date.parse('2026-01-01T00:00:00Z') });
  });
});
