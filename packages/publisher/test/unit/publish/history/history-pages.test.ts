import type { Quad } from '@rdfjs/types';
import { DataFactory } from 'n3';
import { describe, expect, it } from 'vitest';
import { formatNames } from '@rdf-stream/protocol';
import { loadBundledContext } from '../../../../src/model/bundled-context.js';
import { elementQuads, elementQuadsFromTriples } from '../../../../src/model/observation.js';
import { elementGraphIri, type StreamElement } from '../../../../src/model/stream-element.js';
import {
  historyDocument,
  historyEntityTag,
  historyIndexQuads,
  historyTag,
  historyPageQuads,
  historyRootQuads,
  type LogPosition,
  pageState,
  parsePageId,
  removedPageQuads,
} from '../../../../src/publish/history/history-pages.js';
import { JsonLdWriter } from '../../../../src/render/jsonld-writer.js';
import { renderElement } from '../../../../src/render/render-element.js';
import { sampleObservations } from '../../../../src/testing/sample-observations.js';
import { expectIsomorphic, flatten, parseRdf, refusedContextUrls } from '../../../support/rdf.js';

const { namedNode, literal, blankNode, quad } = DataFactory;
const base = 'http://127.0.0.1:8080';
const streamIri = `${base}/streams/parking`;
const stream = { iri: streamIri, retainedSeconds: 0 };
const jsonLd = new JsonLdWriter(loadBundledContext().document, `${base}/contexts/sosa-stream.jsonld`);

const TREE = 'https://w3id.org/tree#';
const TIME_INDEX = 'https://w3id.org/rdf-stream/vocab#timeIndex';
const LDES = 'https://w3id.org/ldes#';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const SEQUENCE_NUMBER = 'https://w3id.org/rdf-stream/vocab#sequenceNumber';

const at = (seq: number) => new Date(Date.UTC(2026, 10, 22, 16, 20, seq, 123));

function streamElement(seq: number, quadsOf: (graph: string, generatedAt: Date) => Quad[] = defaultQuads): StreamElement {
  const graph = elementGraphIri(base, 'parking', 'e1', seq);
  return { streamId: 'parking', epoch: 'e1', seq, graph, generatedAt: at(seq), quads: quadsOf(graph, at(seq)) };
}
const defaultQuads = (graph: string, generatedAt: Date) => elementQuads(graph, generatedAt, sampleObservations(streamIri, [1, 2]));

/** The one object of `predicate` on `subject`'s relation(s). */
function relations(quads: readonly Quad[], node: string) {
  return quads
    .filter((q) => q.subject.value === node && q.predicate.value === `${TREE}relation`)
    .map((link) => {
      const of = (predicate: string) => quads.find((q) => q.subject.equals(link.object) && q.predicate.value === predicate)?.object;
      return { type: of(RDF_TYPE)?.value, path: of(`${TREE}path`)?.value, value: of(`${TREE}value`), node: of(`${TREE}node`)?.value };
    });
}

describe('pageState', () => {
  // Pages of 3: page 1 holds 1–3, page 2 4–6, … Retention kept 4–10.
  const position: LogPosition = { epoch: 'e1', pageElements: 3, oldestSeq: 4, latestSeq: 10 };

  it.each([
    [1, 'gone'],
    [2, 'closed'],
    [3, 'closed'],
    [4, 'open'],
    [5, 'not-found'],
  ])('page %i is %s', (page, kind) => {
    expect(pageState(position, { epoch: 'e1', page }).kind).toBe(kind);
  });

  it('a page of another epoch is gone', () => {
    expect(pageState(position, { epoch: 'e0', page: 3 }).kind).toBe('gone');
  });

  it('a full newest page is closed and the next one, still empty, is open', () => {
    const full = { ...position, latestSeq: 9 };
    expect(pageState(full, { epoch: 'e1', page: 3 })).toEqual({ kind: 'closed', page: 3, immutable: true });
    expect(pageState(full, { epoch: 'e1', page: 4 })).toEqual({ kind: 'open', page: 4 });
    expect(pageState(full, { epoch: 'e1', page: 5 }).kind).toBe('not-found');
  });

  it('an empty log has one open page', () => {
    const empty = { epoch: 'e1', pageElements: 3, oldestSeq: undefined, latestSeq: 0 };
    expect(pageState(empty, { epoch: 'e1', page: 1 }).kind).toBe('open');
    expect(pageState(empty, { epoch: 'e1', page: 2 }).kind).toBe('not-found');
  });

  it('a full page retained only in part is not immutable', () => {
    expect(pageState({ ...position, oldestSeq: 5 }, { epoch: 'e1', page: 2 })).toEqual({ kind: 'closed', page: 2, immutable: false });
  });

  it('tags a closed page by epoch, page and format; the open page by the newest element too; the root and the index by their oldest and newest page', () => {
    expect(historyEntityTag(position, { kind: 'closed', page: 2, immutable: true }, 'trig')).toBe('"e1-p2-trig"');
    expect(historyEntityTag(position, { kind: 'open', page: 4 }, 'trig')).toBe('"e1-p4-10-trig"');
    expect(historyEntityTag(position, 'root', 'nquads')).toBe('"e1-h2-4-nquads"');
    expect(historyEntityTag(position, 'index', 'nquads')).toBe('"e1-i2-4-nquads"');
  });

  it('tags each content coding apart, as /latest does: the coding follows the identity tag', () => {
    const full = { kind: 'closed', page: 2, immutable: true } as const;
    expect(historyEntityTag(position, full, 'trig', 'br')).toBe('"e1-p2-trig-br"');
    expect(historyEntityTag(position, full, 'trig', 'gzip')).toBe('"e1-p2-trig-gzip"');
    expect(historyEntityTag(position, { kind: 'open', page: 4 }, 'trig', 'gzip')).toBe('"e1-p4-10-trig-gzip"');
    expect(historyEntityTag(position, 'root', 'nquads', 'br')).toBe('"e1-h2-4-nquads-br"');
    expect(historyEntityTag(position, 'index', 'trig', 'gzip')).toBe('"e1-i2-4-trig-gzip"');
    expect(historyTag(position, full, 'trig')).toBe('e1-p2-trig');
  });

  it.each(['root', 'index'] as const)("the %s's tag changes when a page receives its first element or is removed, not with each element", (node) => {
    const tag = (latestSeq: number, oldestSeq = 4) => historyEntityTag({ ...position, latestSeq, oldestSeq }, node, 'nquads');
    expect(tag(11)).toBe(tag(10));
    expect(tag(12)).toBe(tag(10));
    expect(tag(13)).not.toBe(tag(12));
    expect(tag(13, 7)).not.toBe(tag(13));
    expect(historyEntityTag({ epoch: 'e1', pageElements: 3, oldestSeq: undefined, latestSeq: 0 }, node, 'nquads')).toBe(`"e1-${node === 'root' ? 'h' : 'i'}1-0-nquads"`);
  });

  it('the root and the index never share a tag', () => {
    expect(historyTag(position, 'root', 'trig')).not.toBe(historyTag(position, 'index', 'trig'));
  });
});

describe('parsePageId', () => {
  it('reads {epoch}-{n}', () => {
    expect(parsePageId('e1-12')).toEqual({ epoch: 'e1', page: 12 });
  });

  it.each(['e1-0', 'e1-', '-3', 'E1-3', 'e1-3x', 'e1-99999999999999999', `${'a'.repeat(33)}-1`])('refuses %j', (value) => {
    expect(parsePageId(value)).toBeUndefined();
  });
});

describe('historyRootQuads and historyIndexQuads', () => {
  const root = `${streamIri}/history`;
  const index = `${streamIri}/history/index`;

  const dateTime = (date: Date) => literal(date.toISOString(), namedNode('http://www.w3.org/2001/XMLSchema#dateTime'));
  const since = (page: number, startedAt: Date) => ({
    type: `${TREE}GreaterThanOrEqualToRelation`,
    path: 'http://www.w3.org/ns/prov#generatedAtTime',
    value: dateTime(startedAt),
    node: `${root}/e1-${page}`,
  });
  const links = (quads: readonly Quad[]) => quads.filter((q) => q.subject.value === root && q.predicate.value === TIME_INDEX).map((q) => q.object.value);

  it('links the stream to the root, the root to the oldest retained page only and, by no relation, to the index', () => {
    const quads = historyRootQuads(stream, 'e1', { page: 2, startedAt: at(4) });
    expect(quads.some((q) => q.subject.value === streamIri && q.predicate.value === `${TREE}view` && q.object.value === root)).toBe(true);
    expect(quads.some((q) => q.subject.value === streamIri && q.predicate.value === `${LDES}sequencePath` && q.object.value === SEQUENCE_NUMBER)).toBe(true);
    expect(relations(quads, root)).toEqual([since(2, at(4))]);
    expect(links(quads)).toEqual([index]);
    expect(quads.some((q) => q.predicate.value === `${TREE}node` && q.object.value === index)).toBe(false);
    const startingFrom = quads.find((q) => q.predicate.value === `${LDES}startingFrom`);
    expect(startingFrom?.object.value).toBe('2026-11-22T16:20:04.123Z');
    expect(quads.some((q) => q.predicate.value === `${TREE}member`)).toBe(false);
  });

  it('the index relates to every retained page, from the time its first element was generated', () => {
    const quads = historyIndexQuads(stream, 'e1', [
      { page: 2, startedAt: at(4) },
      { page: 3, startedAt: at(7) },
      { page: 4, startedAt: at(10) },
    ]);
    expect(relations(quads, index)).toEqual([since(2, at(4)), since(3, at(7)), since(4, at(10))]);
    expect(quads.some((q) => q.subject.value === index && q.predicate.value === RDF_TYPE && q.object.value === `${TREE}Node`)).toBe(true);
    expect(quads.some((q) => q.predicate.value === `${TREE}member`)).toBe(false);
  });

  it('keeps the relations of 1000 pages apart in every format (each its own blank node)', async () => {
    const pages = Array.from({ length: 1000 }, (_, n) => ({ page: n + 1, startedAt: new Date(at(0).getTime() + n * 500_000) }));
    const quads = historyIndexQuads(stream, 'e1', pages);
    for (const format of formatNames) {
      const parsed = flatten(await parseRdf(format, historyDocument(quads, [], format, jsonLd).toString()));
      const found = relations(parsed, index);
      expect(found).toHaveLength(1000);
      expect(new Set(found.map((relation) => relation.node)).size).toBe(1000);
      expect(found.find((relation) => relation.node === `${root}/e1-777`)?.value?.value).toBe(pages[776]!.startedAt.toISOString());
    }
  });

  it('have no relation while the log is empty; the root states the age limit when there is one', () => {
    const quads = historyRootQuads({ ...stream, retainedSeconds: 86_400 }, 'e1', undefined);
    expect(relations(quads, root)).toEqual([]);
    expect(links(quads)).toEqual([index]);
    expect(quads.find((q) => q.predicate.value === `${LDES}fullLogDuration`)?.object.value).toBe('PT86400S');
    expect(quads.some((q) => q.predicate.value === `${LDES}startingFrom`)).toBe(false);
    expect(relations(historyIndexQuads(stream, 'e1', []), index)).toEqual([]);
  });
});

describe('removedPageQuads', () => {
  it('a removed page is a node without members whose one relation leads to the oldest retained page', () => {
    const page = `${streamIri}/history/e1-1`;
    const quads = removedPageQuads(stream, 'e1', 1, { page: 3, startedAt: at(7) });
    expect(quads.some((q) => q.subject.value === page && q.predicate.value === RDF_TYPE && q.object.value === `${TREE}Node`)).toBe(true);
    expect(relations(quads, page)).toEqual([
      {
        type: `${TREE}GreaterThanOrEqualToRelation`,
        path: 'http://www.w3.org/ns/prov#generatedAtTime',
        value: literal(at(7).toISOString(), namedNode('http://www.w3.org/2001/XMLSchema#dateTime')),
        node: `${streamIri}/history/e1-3`,
      },
    ]);
    expect(quads.some((q) => q.predicate.value === `${TREE}member`)).toBe(false);
  });
});

describe('historyPageQuads', () => {
  const members = [4, 5, 6].map((seq) => ({ seq, graph: elementGraphIri(base, 'parking', 'e1', seq), generatedAt: at(seq) }));
  const page = `${streamIri}/history/e1-2`;

  it('a closed page lists its members with their sequence numbers and links to the next page from its last member on', () => {
    const quads = historyPageQuads(stream, 'e1', 2, members, true);
    expect(relations(quads, page)).toEqual([
      {
        type: `${TREE}GreaterThanOrEqualToRelation`,
        path: 'http://www.w3.org/ns/prov#generatedAtTime',
        value: literal('2026-11-22T16:20:06.123Z', namedNode('http://www.w3.org/2001/XMLSchema#dateTime')),
        node: `${streamIri}/history/e1-3`,
      },
    ]);
    const listed = quads.filter((q) => q.subject.value === streamIri && q.predicate.value === `${TREE}member`).map((q) => q.object.value);
    expect(listed).toEqual(members.map((member) => member.graph));
    for (const member of members) {
      const seq = quads.find((q) => q.subject.value === member.graph && q.predicate.value === SEQUENCE_NUMBER)?.object;
      expect(seq).toEqual(literal(String(member.seq), namedNode('http://www.w3.org/2001/XMLSchema#integer')));
    }
  });

  it('the open page has no relation yet', () => {
    expect(relations(historyPageQuads(stream, 'e1', 2, members.slice(0, 2), false), page)).toEqual([]);
  });
});

describe('historyDocument', () => {
  const elements = [4, 5, 6].map((seq) => streamElement(seq));
  const rendered = elements.map((element) => renderElement(element, jsonLd));
  const header = historyPageQuads(stream, 'e1', 2, elements, true);
  const graphs = (format: string) => format === 'trig' || format === 'nquads' || format === 'jsonld';

  it.each(formatNames)('a %s page parses to its own quads and every element’s', async (format) => {
    const body = historyDocument(header, rendered, format, jsonLd).toString();
    const expected = [...header, ...elements.flatMap((element) => element.quads)];
    expectIsomorphic(await parseRdf(format, body), graphs(format) ? expected : flatten(expected));
    expect(refusedContextUrls).toEqual([]);
  });

  it('a JSON-LD page is one document: the context once, every element in one @graph', () => {
    const document = JSON.parse(historyDocument(header, rendered, 'jsonld', jsonLd).toString()) as Record<string, unknown>;
    expect(Object.keys(document)).toEqual(['@context', '@graph']);
    expect(document['@context']).toBe(`${base}/contexts/sosa-stream.jsonld`);
  });

  it.each(formatNames)('%s: blank nodes of two elements stay two nodes on one page', async (format) => {
    // Two ingested elements whose parsers both named their blank node b0.
    const withBlank = (graph: string, generatedAt: Date) =>
      elementQuadsFromTriples(graph, generatedAt, [
        quad(namedNode(`${graph}#o`), namedNode('http://www.w3.org/ns/sosa/hasResult'), blankNode('b0')),
        quad(blankNode('b0'), namedNode('http://qudt.org/schema/qudt/numericValue'), literal('1', namedNode('http://www.w3.org/2001/XMLSchema#integer'))),
      ]);
    const blanks = [7, 8].map((seq) => streamElement(seq, withBlank));
    const pageHeader = historyPageQuads(stream, 'e1', 3, blanks, false);
    const body = historyDocument(pageHeader, blanks.map((element) => renderElement(element, jsonLd)), format, jsonLd).toString();
    const parsed = await parseRdf(format, body);
    expect(new Set(parsed.filter((q) => q.object.termType === 'BlankNode').map((q) => q.object.value)).size).toBe(2);
    // The expected quads with each element's b0 renamed apart.
    const expected = [
      ...pageHeader,
      ...blanks.flatMap((element) =>
        element.quads.map((q) => {
          const rename = <T extends Quad['subject'] | Quad['object']>(term: T) =>
            (term.termType === 'BlankNode' ? blankNode(`${term.value}-${element.seq}`) : term) as T;
          return quad(rename(q.subject), q.predicate, rename(q.object), q.graph);
        }),
      ),
    ];
    expectIsomorphic(parsed, graphs(format) ? expected : flatten(expected));
  });
});
