import { describe, expect, it } from 'vitest';
import { decodeElement } from '../../../src/decode/decode-element.js';
import { parseHistoryPage } from '../../../src/transport/history-page.js';

const stream = 'http://127.0.0.1:8080/streams/parking';
const TREE = 'https://w3id.org/tree#';
const PROV = 'http://www.w3.org/ns/prov#';
const XSD = 'http://www.w3.org/2001/XMLSchema#';
const SEQUENCE_NUMBER = 'https://w3id.org/rdf-stream/vocab#sequenceNumber';
const dateTime = (ms: number) => `"${new Date(ms).toISOString()}"^^<${XSD}dateTime>`;

/** An element document as the publisher writes it in N-Quads: its timestamp, then its graph. */
const elementLines = (iri: string, generatedAtMs: number, free: number) =>
  [
    `<${iri}> <${PROV}generatedAtTime> ${dateTime(generatedAtMs)} .`,
    `<${iri}#p1> <http://www.w3.org/ns/sosa/hasSimpleResult> "${free}"^^<${XSD}integer> <${iri}> .`,
    `<${iri}#p1> <http://www.w3.org/ns/sosa/resultTime> ${dateTime(generatedAtMs)} <${iri}> .`,
  ].join('\n');

const relationLines = (node: string, label: string, valueMs: number, target: string) =>
  [
    `<${node}> <${TREE}relation> _:${label} .`,
    `_:${label} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${TREE}GreaterThanOrEqualToRelation> .`,
    `_:${label} <${TREE}path> <${PROV}generatedAtTime> .`,
    `_:${label} <${TREE}value> ${dateTime(valueMs)} .`,
    `_:${label} <${TREE}node> <${target}> .`,
  ].join('\n');

const memberLines = (iri: string, seq: number) =>
  `<${stream}> <${TREE}member> <${iri}> .\n<${iri}> <${SEQUENCE_NUMBER}> "${seq}"^^<${XSD}integer> .`;

const element = (seq: number) => `${stream}/elements/e1-${seq}`;
const pageIri = (n: number) => `${stream}/history/e1-${n}`;

describe('parseHistoryPage', () => {
  it('gives the members in sequence order, whatever the document order, and the next page', () => {
    const text = [
      `<${pageIri(1)}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${TREE}Node> .`,
      relationLines(pageIri(1), 'r', 3_000, pageIri(2)),
      memberLines(element(3), 3),
      memberLines(element(1), 1),
      memberLines(element(2), 2),
      elementLines(element(2), 2_000, 20),
      elementLines(element(3), 3_000, 30),
      elementLines(element(1), 1_000, 10),
    ].join('\n');
    const page = parseHistoryPage(text, { baseIri: pageIri(1) });
    expect(page.next).toBe(pageIri(2));
    expect(page.members.map((member) => [member.seq, member.id, member.epoch, member.generatedAt?.getTime()])).toEqual([
      [1, 'e1-1', 'e1', 1_000],
      [2, 'e1-2', 'e1', 2_000],
      [3, 'e1-3', 'e1', 3_000],
    ]);
  });

  it('writes each member back as its own element document: the decoder reads what a live subscriber would get', async () => {
    const text = [memberLines(element(7), 7), elementLines(element(7), 7_000, 70), memberLines(element(8), 8), elementLines(element(8), 8_000, 80)].join('\n');
    const [seventh] = parseHistoryPage(text, { baseIri: pageIri(3) }).members;
    const decoded = await decodeElement(seventh!.text, 'nquads');
    const live = await decodeElement(elementLines(element(7), 7_000, 70), 'nquads');
    expect(decoded).toMatchObject({ seq: 7, epoch: 'e1', graph: element(7), generatedAt: new Date(7_000) });
    // Not the page's triples (membership, sequence number), nor another member's.
    expect(decoded.quads.map((q) => `${q.subject.value} ${q.predicate.value} ${q.object.value} ${q.graph.value}`).sort()).toEqual(
      live.quads.map((q) => `${q.subject.value} ${q.predicate.value} ${q.object.value} ${q.graph.value}`).sort(),
    );
  });

  it('keeps an element\'s blank nodes with it', async () => {
    const iri = element(4);
    const text = [
      memberLines(iri, 4),
      `<${iri}> <${PROV}generatedAtTime> ${dateTime(4_000)} .`,
      `_:e4_b0 <http://www.w3.org/ns/sosa/hasSimpleResult> "1"^^<${XSD}integer> <${iri}> .`,
      `_:e4_b0 <http://www.w3.org/ns/sosa/madeBySensor> <${stream}/sensors/p1> <${iri}> .`,
    ].join('\n');
    const decoded = await decodeElement(parseHistoryPage(text, { baseIri: pageIri(2) }).members[0]!.text, 'nquads');
    const subjects = new Set(decoded.quads.filter((q) => q.graph.value === iri).map((q) => q.subject.value));
    expect(subjects.size).toBe(1);
    expect([...subjects][0]).not.toBe(iri);
  });

  it("the root's link to the time index is no relation: its one relation leads to the oldest page", () => {
    const text = [
      `<${stream}/history> <https://w3id.org/rdf-stream/vocab#timeIndex> <${stream}/history/index> .`,
      `<${stream}/history> <${TREE}relation> _:r .`,
      `_:r <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${TREE}GreaterThanOrEqualToRelation> .`,
      `_:r <${TREE}value> "2026-11-22T16:00:01Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .`,
      `_:r <${TREE}node> <${pageIri(3)}> .`,
    ].join('\n');
    expect(parseHistoryPage(text, { baseIri: `${stream}/history` })).toEqual({
      members: [],
      relations: [{ node: pageIri(3), fromMs: Date.parse('2026-11-22T16:00:01Z') }],
      next: pageIri(3),
    });
  });

  it('the root of an empty log has no member and no next page', () => {
    const text = `<${stream}> <${TREE}view> <${stream}/history> .\n<${stream}/history> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${TREE}Node> .`;
    expect(parseHistoryPage(text, { baseIri: `${stream}/history` })).toEqual({ members: [], relations: [], next: undefined });
  });

  it('takes the sequence number from the IRI without a sequenceNumber triple, and leaves out a member with neither', () => {
    const text = [
      `<${stream}> <${TREE}member> <${element(5)}> .`,
      elementLines(element(5), 5_000, 50),
      `<${stream}> <${TREE}member> <${stream}/other/x> .`,
      elementLines(`${stream}/other/x`, 5_500, 55),
    ].join('\n');
    expect(parseHistoryPage(text, { baseIri: pageIri(2) }).members.map((member) => member.seq)).toEqual([5]);
  });

  it('of several GreaterThanOrEqualTo relations, follows the one with the earliest value; ignores other relation types', () => {
    const text = [
      relationLines(pageIri(1), 'late', 9_000, pageIri(9)),
      relationLines(pageIri(1), 'early', 2_000, pageIri(2)),
      `<${pageIri(1)}> <${TREE}relation> _:other .`,
      `_:other <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${TREE}LessThanRelation> .`,
      `_:other <${TREE}node> <${pageIri(0)}> .`,
    ].join('\n');
    expect(parseHistoryPage(text, { baseIri: pageIri(1) }).next).toBe(pageIri(2));
  });

  it('reads TriG too', () => {
    const text = `<${stream}> <${TREE}member> <${element(1)}> .
<${element(1)}> <${PROV}generatedAtTime> ${dateTime(1_000)} .
<${element(1)}> { <${element(1)}#p1> <http://www.w3.org/ns/sosa/hasSimpleResult> 10 . }`;
    const [member] = parseHistoryPage(text, { baseIri: pageIri(1), format: 'trig' }).members;
    expect(member!.text.split('\n').filter(Boolean)).toHaveLength(2);
  });

  it('throws n3\'s error, with the line, on a document that is not N-Quads', () => {
    expect(() => parseHistoryPage(`<${stream}> <${TREE}member> <${element(1)}> .\nnot n-quads`, { baseIri: pageIri(1) })).toThrow(/line 2/);
  });
});
