import type { Quad } from '@rdfjs/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FormatName, formatNames } from '@rdf-stream/protocol';
import { formats } from '../../src/render/output-formats.js';
import { readProblem } from '../support/problem.js';
import { parseRdf } from '../support/rdf.js';
import { manualClock, startTestPublisher, type TestPublisher } from '../../src/testing.js';

const TREE = 'https://w3id.org/tree#';
const SEQUENCE_NUMBER = 'https://w3id.org/rdf-stream/vocab#sequenceNumber';
const TIME_INDEX = 'https://w3id.org/rdf-stream/vocab#timeIndex';

/** Elements generated a second apart, well in the past: distinct, increasing timestamps. */
const startMs = Date.now() - 3_600_000;
const pushNumbered = async (running: TestPublisher, count: number) => {
  for (let i = 0; i < count; i++) {
    const seq = running.hub.log.latestSeq + 1;
    await running.push(undefined, new Date(startMs + seq * 1000));
  }
};

/** Uncompressed unless `headers` ask otherwise (fetch would ask for gzip, and decode it). */
const get = (url: string, format: FormatName = 'nquads', headers: Record<string, string> = {}) =>
  fetch(url, { headers: { accept: formats[format].mediaType, 'accept-encoding': 'identity', ...headers } });

async function document(url: string, format: FormatName = 'nquads') {
  const response = await get(url, format);
  expect(response.status, url).toBe(200);
  const quads = await parseRdf(format, await response.text());
  return { response, quads };
}

const relationTargets = (quads: readonly Quad[], node: string) =>
  quads
    .filter((q) => q.subject.value === node && q.predicate.value === `${TREE}relation`)
    .map((link) => quads.find((q) => q.subject.equals(link.object) && q.predicate.value === `${TREE}node`)?.object.value);

const relationValues = (quads: readonly Quad[], node: string) =>
  quads
    .filter((q) => q.subject.value === node && q.predicate.value === `${TREE}relation`)
    .map((link) => quads.find((q) => q.subject.equals(link.object) && q.predicate.value === `${TREE}value`)?.object.value);

const members = (quads: readonly Quad[], streamIri: string) =>
  quads.filter((q) => q.subject.value === streamIri && q.predicate.value === `${TREE}member`).map((q) => q.object.value);

/** Follows the relations from the root, as an LDES client does: the members of every page, in order. */
async function walk(streamIri: string): Promise<{ pages: string[]; members: string[] }> {
  const pages: string[] = [];
  const found: string[] = [];
  let next = relationTargets((await document(`${streamIri}/history`)).quads, `${streamIri}/history`)[0];
  while (next !== undefined) {
    const { quads } = await document(next);
    pages.push(next);
    found.push(...members(quads, streamIri));
    next = relationTargets(quads, next)[0];
  }
  return { pages, members: found };
}

describe('history pages (3 elements a page, 7 published)', () => {
  let running: TestPublisher;
  let stream: string;
  let epoch: string;
  const page = (n: number | string) => `${stream}/history/${typeof n === 'number' ? `${epoch}-${n}` : n}`;
  const element = (seq: number) => `${stream}/elements/${epoch}-${seq}`;

  beforeAll(async () => {
    running = await startTestPublisher({ flags: ['--page-elements', '3', '--retained-elements', '100'] });
    stream = running.hub.definition.iri;
    epoch = running.hub.log.epoch;
    await pushNumbered(running, 7);
  });
  afterAll(() => running.close());

  it('the descriptor names the root as its one tree:view, and links to it', async () => {
    const { response, quads } = await document(stream);
    const views = quads.filter((q) => q.predicate.value === `${TREE}view`);
    expect(views.map((q) => [q.subject.value, q.object.value])).toEqual([[stream, `${stream}/history`]]);
    expect(response.headers.get('link')).toContain(`<${stream}/history>; rel="https://w3id.org/tree#view"`);
  });

  it('the root relates to the oldest page only, links to the time index by no relation, and holds no member', async () => {
    const { response, quads } = await document(`${stream}/history`);
    expect(relationTargets(quads, `${stream}/history`)).toEqual([page(1)]);
    expect(relationValues(quads, `${stream}/history`)).toEqual([new Date(startMs + 1000).toISOString()]);
    expect(quads.filter((q) => q.subject.value === `${stream}/history` && q.predicate.value === TIME_INDEX).map((q) => q.object.value)).toEqual([
      page('index'),
    ]);
    expect(members(quads, stream)).toEqual([]);
    expect(response.headers.get('cache-control')).not.toContain('immutable');
    expect(response.headers.get('vary')).toBe('Accept, Accept-Encoding');
    const etag = response.headers.get('etag')!;
    expect(etag).toBe(`"${epoch}-h1-3-nquads"`);
    expect((await get(`${stream}/history`, 'nquads', { 'if-none-match': etag })).status).toBe(304);
  });

  it('the time index relates to every page from the time of its first element and holds no member; it changes when a page starts', async () => {
    const { response, quads } = await document(page('index'));
    expect(relationTargets(quads, page('index'))).toEqual([page(1), page(2), page(3)]);
    expect(relationValues(quads, page('index'))).toEqual([1, 4, 7].map((seq) => new Date(startMs + seq * 1000).toISOString()));
    expect(members(quads, stream)).toEqual([]);
    expect(response.headers.get('cache-control')).toMatch(/^public, max-age=\d+/);
    expect(response.headers.get('cache-control')).not.toContain('immutable');
    expect(response.headers.get('vary')).toBe('Accept, Accept-Encoding');
    const etag = response.headers.get('etag')!;
    expect(etag).toBe(`"${epoch}-i1-3-nquads"`);
    expect((await get(page('index'), 'nquads', { 'if-none-match': etag })).status).toBe(304);
    const trig = await get(page('index'), 'trig', { 'accept-encoding': 'br' });
    expect(trig.headers.get('content-encoding')).toBe('br');
    expect(trig.headers.get('etag')).toBe(`"${epoch}-i1-3-trig-br"`);
    await trig.arrayBuffer();
  });

  it('a full page is immutable, with a strong ETag, and revalidates with 304', async () => {
    const { response, quads } = await document(page(1));
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(response.headers.get('etag')).toBe(`"${epoch}-p1-nquads"`);
    expect(response.headers.get('last-modified')).toBe(new Date(startMs + 3000).toUTCString());
    expect(members(quads, stream)).toEqual([1, 2, 3].map(element));
    expect(relationTargets(quads, page(1))).toEqual([page(2)]);
    const again = await get(page(1), 'nquads', { 'if-none-match': `W/"${epoch}-p1-nquads"` });
    expect(again.status).toBe(304);
    expect(again.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('the open page has no relation yet and changes with the next element', async () => {
    const before = await document(page(3));
    expect(before.response.headers.get('cache-control')).toMatch(/^public, max-age=\d+/);
    expect(before.response.headers.get('cache-control')).not.toContain('immutable');
    const etag = before.response.headers.get('etag')!;
    expect(etag).toBe(`"${epoch}-p3-7-nquads"`);
    expect(members(before.quads, stream)).toEqual([element(7)]);
    expect(relationTargets(before.quads, page(3))).toEqual([]);

    await pushNumbered(running, 1);
    const stale = await get(page(3), 'nquads', { 'if-none-match': etag });
    expect(stale.status).toBe(200);
    const after = await parseRdf('nquads', await stale.text());
    expect(members(after, stream)).toEqual([element(7), element(8)]);
    // The root and the index name no element of the open page but its first: still the same.
    const root = await get(`${stream}/history`, 'nquads', { 'if-none-match': `"${epoch}-h1-3-nquads"` });
    expect(root.status).toBe(304);
    const index = await get(page('index'), 'nquads', { 'if-none-match': `"${epoch}-i1-3-nquads"` });
    expect(index.status).toBe(304);
  });

  it('once full, the open page closes and links to the next, empty, open page', async () => {
    await pushNumbered(running, 1);
    const closed = await document(page(3));
    expect(closed.response.headers.get('cache-control')).toContain('immutable');
    expect(relationTargets(closed.quads, page(3))).toEqual([page(4)]);
    const open = await document(page(4));
    expect(members(open.quads, stream)).toEqual([]);
    expect(open.response.headers.get('cache-control')).not.toContain('immutable');
  });

  it('every page, the root and the index parse in every format, with the same members and relations', async () => {
    for (const url of [`${stream}/history`, page('index'), page(1), page(2), page(3), page(4)]) {
      const expected = members((await document(url, 'nquads')).quads, stream);
      for (const format of formatNames) {
        const { response, quads } = await document(url, format);
        expect(response.headers.get('content-type')).toContain(formats[format].mediaType);
        expect(members(quads, stream), `${url} as ${format}`).toEqual(expected);
        expect(relationTargets(quads, url), `${url} as ${format}`).toEqual(relationTargets((await document(url, 'nquads')).quads, url));
      }
    }
  });

  it('each member carries its sequence number and its own graph', async () => {
    const { quads } = await document(page(2));
    const seq = quads.find((q) => q.subject.value === element(5) && q.predicate.value === SEQUENCE_NUMBER);
    expect(seq?.object.value).toBe('5');
    const own = await document(element(5));
    for (const q of own.quads) expect(quads.some((p) => p.equals(q)), `${q.subject.value} ${q.predicate.value}`).toBe(true);
  });

  it('404 beyond the open page and for a malformed id', async () => {
    for (const id of [5, 'not-a-page', `${epoch}-0`]) {
      const response = await get(page(id));
      expect(response.status, String(id)).toBe(404);
      expect((await readProblem(response)).code).toBe('PUB_ERR_PAGE_NOT_FOUND');
    }
  });

  it('410 for a page of another epoch', async () => {
    const response = await get(page('otherepoch-1'));
    expect(response.status).toBe(410);
    expect((await readProblem(response)).code).toBe('PUB_ERR_PAGE_GONE');
  });

  it('406 when no format is acceptable', async () => {
    const response = await fetch(page(1), { headers: { accept: 'image/png' } });
    expect(response.status).toBe(406);
  });
});

describe('history pages under retention (3 elements a page, 4 retained)', () => {
  let running: TestPublisher;
  let stream: string;
  let epoch: string;

  beforeAll(async () => {
    running = await startTestPublisher({ flags: ['--page-elements', '3', '--retained-elements', '4', '--history-grace-seconds', '0'] });
    stream = running.hub.definition.iri;
    epoch = running.hub.log.epoch;
    // 1–11 published: at least the 4 newest (8–11) kept, by whole pages: 7–11.
    await pushNumbered(running, 11);
  });
  afterAll(() => running.close());

  it('the root links to the oldest retained page, the index to the retained pages only', async () => {
    const { quads } = await document(`${stream}/history`);
    expect(relationTargets(quads, `${stream}/history`)).toEqual([`${stream}/history/${epoch}-3`]);
    const index = await document(`${stream}/history/index`);
    expect(relationTargets(index.quads, `${stream}/history/index`)).toEqual([3, 4].map((n) => `${stream}/history/${epoch}-${n}`));
  });

  it('without a grace period, a page removed by retention is 410 Gone at once', async () => {
    expect(running.hub.log.oldestSeq).toBe(7);
    for (const n of [1, 2]) {
      const response = await get(`${stream}/history/${epoch}-${n}`);
      expect(response.status).toBe(410);
      expect((await readProblem(response)).code).toBe('PUB_ERR_PAGE_GONE');
    }
  });

  it('nothing retained links to a removed page: the walk from the root finds exactly the retained elements, in order', async () => {
    const { pages, members: found } = await walk(stream);
    expect(pages).toEqual([3, 4].map((n) => `${stream}/history/${epoch}-${n}`));
    expect(found).toEqual([7, 8, 9, 10, 11].map((seq) => `${stream}/elements/${epoch}-${seq}`));
  });
});

describe('history grace period (3 elements a page, 4 retained, historyGraceSeconds 60)', () => {
  const graceSeconds = 60;
  let running: TestPublisher;
  let stream: string;
  let epoch: string;
  const time = manualClock(Date.now());
  const page = (n: number) => `${stream}/history/${epoch}-${n}`;
  let cachedRoot: string[];
  let cachedIndex: string[];
  let removedAtMs: number;

  beforeAll(async () => {
    // An hour between elements: a cache could keep the root an hour but for the grace period.
    running = await startTestPublisher({
      flags: ['--page-elements', '3', '--retained-elements', '4', '--history-grace-seconds', String(graceSeconds)],
      clock: time.clock,
      intervalMs: 3_600_000,
    });
    stream = running.hub.definition.iri;
    epoch = running.hub.log.epoch;
    const base = Date.now();
    for (let seq = 1; seq <= 6; seq++) await running.push(undefined, new Date(base + seq));
    // The root and the index as a cache keeps them: page 1; pages 1 and 2.
    cachedRoot = relationTargets((await document(`${stream}/history`)).quads, `${stream}/history`).filter((url) => url !== undefined);
    cachedIndex = relationTargets((await document(`${stream}/history/index`)).quads, `${stream}/history/index`).filter((url) => url !== undefined);
    // 7–11: retention (of the memory log, as it appends) removes pages 1 and 2.
    time.advanceBy(1_000);
    removedAtMs = time.now();
    for (let seq = 7; seq <= 11; seq++) await running.push(undefined, new Date(base + seq));
  });
  afterAll(() => running.close());

  it("bounds the root's and the index's freshness by the grace period, not the open page's", async () => {
    const root = await get(`${stream}/history`);
    expect(root.headers.get('cache-control')).toBe(`public, max-age=${graceSeconds}`);
    const index = await get(`${stream}/history/index`);
    expect(index.headers.get('cache-control')).toBe(`public, max-age=${graceSeconds}`);
    const open = await get(page(4));
    expect(Number(/max-age=(\d+)/.exec(open.headers.get('cache-control')!)![1])).toBeGreaterThan(graceSeconds);
  });

  it('a page removed less than the grace period ago leads to the oldest retained page; at the grace period it is 410', async () => {
    expect(cachedRoot).toEqual([page(1)]);
    expect(cachedIndex).toEqual([page(1), page(2)]);
    expect(running.hub.log.oldestSeq).toBe(7);
    time.advanceTo(removedAtMs + graceSeconds * 1000 - 1);
    for (const n of [1, 2]) {
      const { response, quads } = await document(page(n));
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(members(quads, stream)).toEqual([]);
      expect(relationTargets(quads, page(n))).toEqual([page(3)]);
      expect(relationValues(quads, page(n))).toEqual([(await running.hub.log.get(7))!.generatedAt.toISOString()]);
    }
    time.advanceTo(removedAtMs + graceSeconds * 1000);
    for (const n of [1, 2]) {
      const response = await get(page(n));
      expect(response.status).toBe(410);
      expect((await readProblem(response)).code).toBe('PUB_ERR_PAGE_GONE');
    }
  });
});
