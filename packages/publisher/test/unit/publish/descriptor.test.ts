import type { Quad } from '@rdfjs/types';
import { describe, expect, it } from 'vitest';
import { EVENT_STREAM_MEDIA_TYPE, formatNames, mediaTypeIri, mediaTypes, RDF_PATCH_MEDIA_TYPE } from '@rdf-stream/protocol';
import { ns } from '../../../src/model/vocabulary.js';
import { catalogueQuads, descriptorQuads } from '../../../src/publish/descriptor.js';
import type { StreamDefinition } from '../../../src/publish/stream-hub.js';

const iri = 'http://127.0.0.1:8080/streams/parking';
const stream: StreamDefinition = { id: 'parking', title: 'Parking', iri, expectedIntervalMs: 5_000, retainedElements: 100, retainedSeconds: 0 };

const objects = (quads: readonly Quad[], subject: string, predicate: string) =>
  quads.filter((q) => q.subject.value === subject && q.predicate.value === predicate).map((q) => q.object.value);
const dcat = (local: string) => `${ns.dcat}${local}`;

describe('descriptorQuads', () => {
  const quads = descriptorQuads(stream);

  it('describes an LDES event stream with exactly one view, the root of its history', () => {
    expect(objects(quads, iri, `${ns.rdf}type`)).toEqual(expect.arrayContaining([`${ns.ldes}EventStream`, `${ns.vocals}RDFStream`, dcat('Dataset')]));
    expect(objects(quads, iri, `${ns.tree}view`)).toEqual([`${iri}/history`]);
    // Its time index, by no tree:relation.
    expect(objects(quads, `${iri}/history`, 'https://w3id.org/rdf-stream/vocab#timeIndex')).toEqual([`${iri}/history/index`]);
    expect(quads.some((q) => q.predicate.value === `${ns.tree}relation`)).toBe(false);
    expect(objects(quads, iri, `${ns.ldes}timestampPath`)).toEqual(['http://www.w3.org/ns/prov#generatedAtTime']);
  });

  it('states the interval between elements as an xsd:duration, and none for an irregular stream', () => {
    const [resolution] = quads.filter((q) => q.subject.value === iri && q.predicate.value === dcat('temporalResolution'));
    expect(resolution?.object.value).toBe('PT5S');
    expect(resolution?.object.termType === 'Literal' && resolution.object.datatype.value).toBe(`${ns.xsd}duration`);
    expect(objects(descriptorQuads({ ...stream, expectedIntervalMs: null }), iri, dcat('temporalResolution'))).toEqual([]);
  });

  it('offers /latest, SSE, WebSocket and history distributions in every format, plus the two patch feeds', () => {
    const distributions = objects(quads, iri, dcat('distribution'));
    expect(distributions).toHaveLength(formatNames.length * 4 + 2);
    for (const format of formatNames) {
      expect(objects(quads, `${iri}#latest-${format}`, dcat('mediaType')), format).toEqual([mediaTypeIri(mediaTypes[format])]);
      expect(objects(quads, `${iri}#events-${format}`, dcat('accessURL')), format).toEqual([`${iri}/events?format=${format}`]);
      expect(objects(quads, `${iri}#events-${format}`, dcat('mediaType')), format).toEqual([mediaTypeIri(EVENT_STREAM_MEDIA_TYPE)]);
      expect(objects(quads, `${iri}#ws-${format}`, dcat('accessURL')), format).toEqual([`ws://127.0.0.1:8080/streams/parking/ws?format=${format}`]);
    }
    expect(objects(quads, `${iri}#patches`, dcat('accessURL'))).toEqual([`${iri}/patches`]);
    expect(objects(quads, `${iri}#ws-patch`, dcat('mediaType'))).toEqual([mediaTypeIri(RDF_PATCH_MEDIA_TYPE)]);
    // Every distribution described has its type.
    for (const distribution of distributions) expect(objects(quads, distribution, `${ns.rdf}type`), distribution).toContain(dcat('Distribution'));
  });

  it('announces a retention policy on the history only when elements expire by age', () => {
    const retention = (definition: StreamDefinition) => objects(descriptorQuads(definition), `${iri}/history`, `${ns.ldes}retentionPolicy`);
    expect(retention(stream)).toEqual([]);
    const aged = descriptorQuads({ ...stream, retainedSeconds: 3_600 });
    const [policy] = aged.filter((q) => q.predicate.value === `${ns.ldes}retentionPolicy`);
    expect(policy).toBeDefined();
    expect(aged.filter((q) => q.subject.equals(policy!.object) && q.predicate.value === `${ns.ldes}fullLogDuration`).map((q) => q.object.value)).toEqual(['PT3600S']);
  });

  it('carries the description and licence only when given', () => {
    expect(objects(quads, iri, `${ns.dcterms}description`)).toEqual([]);
    expect(objects(quads, iri, `${ns.dcterms}license`)).toEqual([]);
    const described = descriptorQuads({ ...stream, description: 'Free spaces', license: 'https://creativecommons.org/licenses/by/4.0/' });
    expect(objects(described, iri, `${ns.dcterms}description`)).toEqual(['Free spaces']);
    expect(objects(described, iri, `${ns.dcterms}license`)).toEqual(['https://creativecommons.org/licenses/by/4.0/']);
  });
});

describe('catalogueQuads', () => {
  it('lists every stream as a dataset of the catalogue, with its title', () => {
    const catalogue = 'http://127.0.0.1:8080/streams';
    const other = { ...stream, id: 'air', title: 'Air', iri: 'http://127.0.0.1:8080/streams/air' };
    const quads = catalogueQuads(catalogue, [stream, other]);
    expect(objects(quads, catalogue, `${ns.rdf}type`)).toEqual([dcat('Catalog')]);
    expect(objects(quads, catalogue, dcat('dataset'))).toEqual([iri, other.iri]);
    expect(objects(quads, other.iri, `${ns.dcterms}title`)).toEqual(['Air']);
  });
});
