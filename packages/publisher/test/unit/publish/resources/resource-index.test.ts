import { describe, expect, it } from 'vitest';
import { streamResources } from '@rdf-stream/protocol';
import { elementQuads, type Observation } from '../../../../src/model/observation.js';
import { writeRdf } from '../../../../src/render/render-element.js';
import { ResourceIndex } from '../../../../src/publish/resources/resource-index.js';

const stream = 'http://127.0.0.1:8080/streams/parking';
const minted = streamResources(stream);

/** Element `seq`, whose observations are of the facilities named, as `/latest` serves it. */
function element(seq: number, facilities: readonly string[]) {
  const graph = `${stream}/elements/e1-${seq}`;
  const generatedAt = new Date(Date.UTC(2026, 10, 22, 16, 0, seq));
  const observations: Observation[] = facilities.map((facility) => ({
    id: facility,
    sensor: minted.sensor(facility),
    observedProperty: 'http://vocab.datex.org/terms#parkingNumberOfVacantSpaces',
    featureOfInterest: minted.featureOfInterest(facility),
    simpleResult: seq,
  }));
  return { seq, generatedAt, graph, ntriples: Buffer.from(writeRdf(elementQuads(graph, generatedAt, observations), 'ntriples')) };
}

describe('ResourceIndex', () => {
  it('describes each resource as of the newest element that mentions it, and keeps the older description of one the newest leaves out', () => {
    const index = new ResourceIndex(stream, 100);
    index.index(element(1, ['p1', 'p2']));
    index.index(element(2, ['p1']));
    expect(index.get(minted.sensor('p1'))?.seq).toBe(2);
    expect(index.get(minted.sensor('p2'))?.seq).toBe(1);
    expect(index.get(minted.featureOfInterest('p2'))?.generatedAt).toEqual(new Date(Date.UTC(2026, 10, 22, 16, 0, 1)));
    expect(index.get(minted.sensor('p3'))).toBeUndefined();
  });

  it('builds a description once per element: the same object until an element mentions the resource again', () => {
    const index = new ResourceIndex(stream, 100);
    index.index(element(1, ['p1', 'p2']));
    const first = index.get(minted.sensor('p1'));
    index.index(element(2, ['p2']));
    expect(index.get(minted.sensor('p1'))).toBe(first);
    index.index(element(3, ['p1']));
    expect(index.get(minted.sensor('p1'))).not.toBe(first);
  });

  it('ignores an element no newer than one it read', () => {
    const index = new ResourceIndex(stream, 100);
    index.index(element(5, ['p1']));
    index.index(element(4, ['p1', 'p2']));
    index.index(element(5, ['p3']));
    expect(index.get(minted.sensor('p1'))?.seq).toBe(5);
    expect(index.get(minted.sensor('p2'))).toBeUndefined();
    expect(index.get(minted.sensor('p3'))).toBeUndefined();
  });

  it('keeps maxResources at most: at the limit, the least recently mentioned resource is forgotten first', () => {
    // Each facility is two resources: its sensor and its feature of interest.
    const index = new ResourceIndex(stream, 4);
    index.index(element(1, ['p1', 'p2']));
    expect(index.size).toBe(4);
    index.index(element(2, ['p1']));
    index.index(element(3, ['p3']));
    expect(index.size).toBe(4);
    expect(index.get(minted.sensor('p2'))).toBeUndefined();
    expect(index.get(minted.featureOfInterest('p2'))).toBeUndefined();
    expect(index.get(minted.sensor('p1'))?.seq).toBe(2);
    expect(index.get(minted.sensor('p3'))?.seq).toBe(3);
  });

  it('describes nothing with a limit of 0', () => {
    const index = new ResourceIndex(stream, 0);
    index.index(element(1, ['p1']));
    expect(index.size).toBe(0);
    expect(index.get(minted.sensor('p1'))).toBeUndefined();
  });
});

describe('ResourceIndex, for a stream that mints nothing', () => {
  it('describes nothing, and reads on: an element that mentions its resources later is indexed', () => {
    const index = new ResourceIndex('http://127.0.0.1:8080/streams/other', 100);
    index.index(element(1, ['p1']));
    expect(index.size).toBe(0);
    const own = new ResourceIndex(stream, 100);
    own.index({ ...element(1, []), ntriples: Buffer.from('not N-Triples at all, and never parsed') });
    own.index(element(2, ['p1']));
    expect(own.get(minted.sensor('p1'))?.seq).toBe(2);
  });
});
