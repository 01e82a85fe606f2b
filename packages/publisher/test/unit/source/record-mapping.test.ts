import { parse as parseCsv } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { mapRecords, type RecordMapping, recordsOf, validateMapping } from '../../../src/source/record-mapping.js';

const degC = 'http://qudt.org/vocab/unit/DEG_C';

const mapping: RecordMapping = {
  sensor: 'https://data.example.org/sensors/{id}',
  observedProperty: 'https://data.example.org/properties/temperature',
  featureOfInterest: 'https://data.example.org/rooms/{room.name}',
  result: '{value}',
};

describe('mapRecords', () => {
  it('fills templates from dot paths, percent-encoding the values put into IRIs', () => {
    const { observations, rejected } = mapRecords([{ id: 's 1/a', room: { name: 'Hall é?#' }, value: 21.5 }], mapping);
    expect(rejected).toEqual([]);
    expect(observations).toEqual([
      {
        id: 'o1',
        sensor: 'https://data.example.org/sensors/s%201%2Fa',
        observedProperty: 'https://data.example.org/properties/temperature',
        featureOfInterest: 'https://data.example.org/rooms/Hall%20%C3%A9%3F%23',
        simpleResult: 21.5,
      },
    ]);
  });

  it('keeps the JSON type of the result', () => {
    const results = [3, true, 'open', 0, false].map((value) => ({ id: 'a', room: { name: 'r' }, value }));
    expect(mapRecords(results, mapping).observations.map((o) => o.simpleResult)).toEqual([3, true, 'open', 0, false]);
  });

  it('turns the numeric strings of a CSV file into numbers, and leaves other strings alone', () => {
    const csv = 'id,room,value\na,r1,42\nb,r2, -1.5e2 \nc,r3,0x10\nd,r4,007\n';
    const records = parseCsv(csv, { columns: true }) as unknown[];
    const csvMapping = { ...mapping, featureOfInterest: 'https://data.example.org/rooms/{room}' };
    expect(mapRecords(records, csvMapping).observations.map((o) => o.simpleResult)).toEqual([42, -150, '0x10', 7]);
  });

  it('reads result times as ISO 8601 date-times with a zone, or as epoch milliseconds', () => {
    const timed = { ...mapping, resultTime: '{at}' };
    const base = { id: 'a', room: { name: 'r' }, value: 1 };
    const { observations, rejected } = mapRecords(
      [
        { ...base, at: '2026-03-07T10:00:00Z' },
        { ...base, at: '2026-03-07T11:00:00.250+01:00' },
        { ...base, at: 1_772_877_600_000 },
        { ...base, at: '1772877600000' },
        { ...base, at: '2026-03-07T10:00:00' },
        { ...base, at: 'March 7, 2026' },
        { ...base, at: '2026-13-07T10:00:00Z' },
        { ...base, at: { iso: '2026-03-07T10:00:00Z' } },
      ],
      timed,
    );
    expect(observations.map((o) => o.resultTime?.toISOString())).toEqual([
      '2026-03-07T10:00:00.000Z',
      '2026-03-07T10:00:00.250Z',
      '2026-03-07T10:00:00.000Z',
      '2026-03-07T10:00:00.000Z',
    ]);
    expect(rejected.map((r) => r.index)).toEqual([4, 5, 6, 7]);
    expect(rejected[0]?.reason).toMatch(/resultTime \{at\} must be an ISO 8601 date-time with a time zone/);
  });

  it('adds a unit, and then requires a numeric result', () => {
    const withUnit = { ...mapping, unit: degC };
    const { observations, rejected } = mapRecords(
      [
        { id: 'a', room: { name: 'r' }, value: '19.5' },
        { id: 'b', room: { name: 'r' }, value: 'warm' },
        { id: 'c', room: { name: 'r' }, value: true },
      ],
      withUnit,
    );
    expect(observations).toEqual([expect.objectContaining({ simpleResult: 19.5, unit: degC })]);
    expect(rejected).toEqual([
      { index: 1, reason: 'result {value} must be a number with a unit, got "warm"' },
      { index: 2, reason: 'result {value} must be a number with a unit, got true' },
    ]);
  });

  it('rejects records it cannot map, with the reason, and maps the others', () => {
    const { observations, rejected } = mapRecords(
      [
        { id: 'a', room: { name: 'r' }, value: 1 },
        { id: 'b', room: {}, value: 2 },
        { id: 'c', room: { name: 'r' }, value: null },
        { id: 'd', room: { name: 'r' } },
        { id: 'e', room: { name: 'r' }, value: Number.NaN },
        { id: 'f', room: { name: 'r' }, value: 'NaN' },
        { id: 'g', room: { name: 'r' }, value: '' },
        { id: { nested: true }, room: { name: 'r' }, value: 3 },
        { id: '', room: { name: 'r' }, value: 4 },
        { id: '\uD800', room: { name: 'r' }, value: 5 },
        42,
        null,
        ['a'],
        { id: 'z', room: { name: 'r' }, value: 6 },
      ],
      mapping,
    );
    expect(observations.map((o) => o.id)).toEqual(['o1', 'o14']);
    expect(rejected).toEqual([
      { index: 1, reason: 'missing field {room.name}' },
      { index: 2, reason: 'field {value} is null' },
      { index: 3, reason: 'missing field {value}' },
      { index: 4, reason: 'result {value} is not a finite number' },
      { index: 5, reason: 'result {value} is NaN' },
      { index: 6, reason: 'result {value} is empty' },
      { index: 7, reason: 'field {id} is an object, not a string, number or boolean' },
      { index: 8, reason: 'field {id} is empty' },
      { index: 9, reason: 'field {id} is not valid Unicode' },
      { index: 10, reason: 'the record is a number, not an object' },
      { index: 11, reason: 'the record is null, not an object' },
      { index: 12, reason: 'the record is an array, not an object' },
    ]);
  });

  it('rejects a record whose values do not give an absolute IRI', () => {
    const whole = { ...mapping, sensor: '{scheme}:{id}' };
    const { observations, rejected } = mapRecords(
      [
        { scheme: 'urn', id: 'x', room: { name: 'r' }, value: 1 },
        { scheme: 'not a scheme', id: 'x', room: { name: 'r' }, value: 1 },
      ],
      whole,
    );
    expect(observations.map((o) => o.sensor)).toEqual(['urn:x']);
    expect(rejected).toEqual([{ index: 1, reason: 'sensor "not%20a%20scheme:x" is not an absolute IRI' }]);
  });

  it('never reads through the prototype: __proto__ and constructor are ordinary, usually missing, keys', () => {
    const prototypeMapping = { ...mapping, sensor: 'https://data.example.org/sensors/{constructor.name}', result: '{__proto__.value}' };
    const plain = { constructor: { name: 'c' }, room: { name: 'r' }, value: 1 };
    const inherited = { room: { name: 'r' }, value: 1 };
    const ownProto = JSON.parse('{"__proto__": {"value": 7}, "constructor": {"name": "c"}, "room": {"name": "r"}}') as unknown;
    const { observations, rejected } = mapRecords([plain, inherited, ownProto], prototypeMapping);
    expect(rejected).toEqual([
      { index: 0, reason: 'missing field {__proto__.value}' },
      { index: 1, reason: 'missing field {constructor.name}' },
    ]);
    expect(observations).toEqual([expect.objectContaining({ sensor: 'https://data.example.org/sensors/c', simpleResult: 7 })]);
    expect(({} as Record<string, unknown>)['value']).toBeUndefined();
  });

  it('makes ids IRI-safe and unique within the batch', () => {
    const { observations } = mapRecords(
      [
        { id: 'a/b', room: { name: 'r' }, value: 1 },
        { id: 'a b', room: { name: 'r' }, value: 2 },
        { id: 'c', room: { name: 'r' }, value: 3 },
      ],
      { ...mapping, id: 'room-{room.name}.{id}' },
    );
    expect(observations.map((o) => o.id)).toEqual(['room-r_a_b', 'room-r_a_b-2', 'room-r_c']);
  });
});

describe('recordsOf', () => {
  it('defaults to the document if it is an array, else to the document alone', () => {
    expect(recordsOf([1, 2], mapping)).toEqual([1, 2]);
    expect(recordsOf({ a: 1 }, mapping)).toEqual([{ a: 1 }]);
  });

  it('follows the records path, and says clearly when it is missing or not an array', () => {
    const withPath = { ...mapping, records: 'data.records' };
    expect(recordsOf({ data: { records: [{ a: 1 }] } }, withPath)).toEqual([{ a: 1 }]);
    expect(() => recordsOf({ data: {} }, withPath)).toThrow('The document has no "data.records"');
    expect(() => recordsOf({ data: { records: { a: 1 } } }, withPath)).toThrow(
      '"data.records" in the document is not an array (got an object)',
    );
    expect(() => recordsOf([], { ...mapping, records: 'constructor' })).toThrow('The document has no "constructor"');
    expect(() => recordsOf({}, { ...mapping, records: '__proto__' })).toThrow('The document has no "__proto__"');
  });
});

describe('validateMapping', () => {
  it('accepts a usable mapping', () => {
    expect(validateMapping({ ...mapping, records: 'a.b', resultTime: '{at}', unit: degC, id: '{id}-{room.name}' })).toEqual([]);
  });

  it('names each problem with the templates themselves', () => {
    expect(
      validateMapping({
        records: 'a..b',
        sensor: 'https://example.org/{id',
        observedProperty: 'https://example.org/}',
        featureOfInterest: 'urn:{url',
        result: 'value: {value}',
        resultTime: '{a}{b}',
        unit: 'DEG_C',
        id: '{}',
      }),
    ).toEqual([
      'records: "a..b" is not a dot path',
      'sensor: unbalanced "{" at position 21',
      'observedProperty: unbalanced "}" at position 21',
      'featureOfInterest: unbalanced "{" at position 5',
      'unit: "DEG_C" does not give an absolute IRI (e.g. "https://example.org/sensors/{id}")',
      'result: must be a single placeholder such as "{value}", got "value: {value}"',
      'resultTime: must be a single placeholder such as "{value}", got "{a}{b}"',
      'id: placeholder {} is not a dot path',
    ]);
  });

  it('takes the IRI of a field as is when the template is the placeholder alone', () => {
    const verbatim = { ...mapping, sensor: '{sensorIri}' };
    expect(validateMapping(verbatim)).toEqual([]);
    const { observations, rejected } = mapRecords(
      [
        { room: { name: 'r' }, value: 1, sensorIri: 'https://example.org/sensors/a b?x=1' },
        { room: { name: 'r' }, value: 2, sensorIri: 'https://example.org/sensors/t1?x=1#y' },
        { room: { name: 'r' }, value: 3, sensorIri: 'not an iri' },
      ],
      verbatim,
    );
    expect(observations.map((o) => o.sensor)).toEqual(['https://example.org/sensors/t1?x=1#y']);
    expect(rejected.map((r) => r.index)).toEqual([0, 2]);
  });

  it('finds nested braces, and makes mapRecords refuse the mapping', () => {
    const nested = { ...mapping, sensor: 'https://example.org/{a{b}}' };
    expect(validateMapping(nested)).toEqual(['sensor: unbalanced "{" at position 21']);
    expect(() => mapRecords([], nested)).toThrow('Unusable record mapping: sensor: unbalanced "{" at position 21');
  });
});
