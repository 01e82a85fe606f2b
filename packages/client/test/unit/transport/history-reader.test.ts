import { describe, expect, it } from 'vitest';
import { type HistoryPosition, historyReader, type HistoryStart } from '../../../src/transport/history-reader.js';
import { SubscriptionError } from '../../../src/transport/subscription-error.js';
import type { TransportEvent } from '../../../src/transport/transport-event.js';
import { emptyStats } from '../../../src/transport/transport-stats.js';

const stream = 'http://publisher.test/streams/parking';
const TREE = 'https://w3id.org/tree#';
const PROV = 'http://www.w3.org/ns/prov#';
const XSD = 'http://www.w3.org/2001/XMLSchema#';
/** Element n was generated at n seconds past this. */
const t0 = Date.parse('2026-11-22T16:00:00Z');
const timeOf = (seq: number) => new Date(t0 + seq * 1000);
const dateTime = (date: Date) => `"${date.toISOString()}"^^<${XSD}dateTime>`;

/**
 * The publisher's history contract, in memory: pages of `pageElements`, page n holding seqs
 * (n-1)·P+1..n·P, the root linking to the oldest retained page, the time index (`history/index`;
 * 404 with `noIndex`, as from a publisher before it) to every retained page from its first
 * element's time, a full page linking to the next; 410 below the oldest page (or, with `graceAnswers`, a node leading
 * to the oldest retained page), 404 beyond the open one. `before(url)` runs before each answer,
 * so a test can move the log between two requests.
 */
class FakeHistory {
  epoch = 'e1';
  oldestSeq = 1;
  latestSeq = 0;
  readonly requests: string[] = [];
  readonly signals: Array<AbortSignal | null | undefined> = [];
  before: (url: string) => void = () => {};
  /** Removed pages answer a node leading to the oldest retained page (within the grace period). */
  graceAnswers = false;
  /** The index answers 404, as from a publisher that has none (its root then relates to every page). */
  noIndex = false;
  /** Answers instead of the history, by URL, once each. */
  readonly overrides = new Map<string, () => Response>();

  constructor(readonly pageElements: number) {}

  readonly fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    this.requests.push(url);
    this.signals.push(init?.signal);
    this.before(url);
    if (init?.signal?.aborted) throw new DOMException('aborted', 'AbortError');
    const override = this.overrides.get(url);
    if (override !== undefined) {
      this.overrides.delete(url);
      return override();
    }
    if (url === `${stream}/history`) return this.#nquads(this.noIndex ? this.index(`${stream}/history`) : this.root());
    if (url === `${stream}/history/index`) return this.noIndex ? new Response('', { status: 404 }) : this.#nquads(this.index());
    const match = /\/history\/([a-z0-9]+)-(\d+)$/.exec(url);
    if (match === null) return new Response('', { status: 404 });
    const page = Number(match[2]);
    const oldestPage = Math.ceil(this.oldestSeq / this.pageElements);
    if (match[1] === this.epoch && page < oldestPage && this.graceAnswers) {
      return this.#nquads(this.#relation(this.#pageIri(page), timeOf(this.oldestSeq), this.#pageIri(oldestPage)));
    }
    if (match[1] !== this.epoch || page < oldestPage) return new Response('', { status: 410 });
    if (page > this.#openPage()) return new Response('', { status: 404 });
    return this.#nquads(this.#page(page));
  }) as typeof fetch;

  #openPage() {
    return this.latestSeq % this.pageElements === 0 ? this.latestSeq / this.pageElements + 1 : Math.ceil(this.latestSeq / this.pageElements);
  }

  #pageIri = (page: number) => `${stream}/history/${this.epoch}-${page}`;
  #element = (seq: number) => `${stream}/elements/${this.epoch}-${seq}`;

  #relation(node: string, value: Date, target: string, label = 'r') {
    const r = `_:${label}`;
    return `<${node}> <${TREE}relation> ${r} .\n${r} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${TREE}GreaterThanOrEqualToRelation> .\n${r} <${TREE}path> <${PROV}generatedAtTime> .\n${r} <${TREE}value> ${dateTime(value)} .\n${r} <${TREE}node> <${target}> .\n`;
  }

  /** The root as it is now (a test may keep one to answer later, as a cache would): a relation to the oldest page. */
  root() {
    const node = `<${stream}/history> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${TREE}Node> .\n<${stream}/history> <https://w3id.org/rdf-stream/vocab#timeIndex> <${stream}/history/index> .\n`;
    if (this.latestSeq < this.oldestSeq) return node;
    const oldest = Math.ceil(this.oldestSeq / this.pageElements);
    return node + this.#relation(`${stream}/history`, timeOf(this.oldestSeq), this.#pageIri(oldest), `p${oldest}`);
  }

  /** The time index as it is now (`node`: as a publisher before it wrote its root). */
  index(node = `${stream}/history/index`) {
    if (this.latestSeq < this.oldestSeq) return `<${node}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${TREE}Node> .\n`;
    let text = '';
    for (let page = Math.ceil(this.oldestSeq / this.pageElements); page <= Math.ceil(this.latestSeq / this.pageElements); page++) {
      const first = Math.max((page - 1) * this.pageElements + 1, this.oldestSeq);
      text += this.#relation(node, timeOf(first), this.#pageIri(page), `p${page}`);
    }
    return text;
  }

  #page(page: number) {
    const first = Math.max((page - 1) * this.pageElements + 1, this.oldestSeq);
    const last = Math.min(page * this.pageElements, this.latestSeq);
    let text = '';
    if (last === page * this.pageElements) text += this.#relation(this.#pageIri(page), timeOf(last), this.#pageIri(page + 1));
    // Members newest first: the reader must order them.
    for (let seq = last; seq >= first; seq--) {
      const iri = this.#element(seq);
      text += `<${stream}> <${TREE}member> <${iri}> .\n<${iri}> <https://w3id.org/rdf-stream/vocab#sequenceNumber> "${seq}"^^<${XSD}integer> .\n`;
      text += `<${iri}> <${PROV}generatedAtTime> ${dateTime(timeOf(seq))} .\n<${iri}#p1> <http://www.w3.org/ns/sosa/hasSimpleResult> "${seq}"^^<${XSD}integer> <${iri}> .\n`;
    }
    return text;
  }

  nquads(text: string) {
    return this.#nquads(text);
  }

  #nquads(text: string) {
    return new Response(text, { status: 200, headers: { 'content-type': 'application/n-quads; charset=utf-8' } });
  }
}

/** Runs a reader to its end: its events (elements as `seq:id`) and the position it returns. */
async function read(history: FakeHistory, from: HistoryStart, signal?: AbortSignal) {
  const stats = emptyStats();
  const reader = historyReader(`${stream}/history`, {
    from,
    stats,
    backoff: { initialDelayMs: 1, maxDelayMs: 1, random: () => 0 },
    fetch: history.fetch,
    ...(signal === undefined ? {} : { signal }),
  });
  const events: Array<string | Exclude<TransportEvent, { type: 'element' }>> = [];
  let step = await reader.next();
  while (!step.done) {
    const event = step.value;
    if (event.type === 'element') {
      expect(event.format).toBe('nquads');
      expect(event.text).toContain(`<${stream}/elements/${event.id}> <http://www.w3.org/ns/prov#generatedAtTime>`);
      events.push(`${/"(\d+)"/.exec(event.text)![1]}:${event.id}`);
    } else {
      events.push(event);
    }
    step = await reader.next();
  }
  return { events, position: step.value as HistoryPosition, stats };
}

const ids = (epoch: string, first: number, last: number) => Array.from({ length: last - first + 1 }, (_, i) => `${first + i}:${epoch}-${first + i}`);

describe('historyReader', () => {
  it('walks the pages from the root and yields every element from a sequence number on, once, in order', async () => {
    const history = new FakeHistory(3);
    history.latestSeq = 8;
    const { events, position, stats } = await read(history, 2);
    expect(events).toEqual(ids('e1', 2, 8));
    expect(position).toEqual({ epoch: 'e1', lastSeq: 8, lastId: 'e1-8' });
    expect(history.requests).toEqual([`${stream}/history`, `${stream}/history/e1-1`, `${stream}/history/e1-2`, `${stream}/history/e1-3`]);
    expect(stats).toMatchObject({ requests: 4, elements: 7, reconnects: 0 });
  });

  it('from a time: the elements generated at or after it', async () => {
    const history = new FakeHistory(3);
    history.latestSeq = 8;
    expect((await read(history, timeOf(5))).events).toEqual(ids('e1', 5, 8));
    expect((await read(history, new Date(timeOf(5).getTime() - 1))).events).toEqual(ids('e1', 5, 8));
  });

  it('from a time: goes from the time index, not the root, straight to the last page that started before it, then walks forward', async () => {
    const history = new FakeHistory(3);
    history.latestSeq = 30;
    const { events, stats } = await read(history, timeOf(20));
    expect(events).toEqual(ids('e1', 20, 30));
    // Page 7 holds 19–21; 8, 9 and 10 follow (10 is full: it links to the empty open page 11).
    expect(history.requests).toEqual([`${stream}/history/index`, ...[7, 8, 9, 10, 11].map((page) => `${stream}/history/e1-${page}`)]);
    expect(stats.requests).toBe(6);
  });

  it('from a sequence number: from the root, whose one relation leads to the oldest page; never the index', async () => {
    const history = new FakeHistory(3);
    history.latestSeq = 7;
    expect((await read(history, 2)).events).toEqual(ids('e1', 2, 7));
    expect(history.requests).toEqual([`${stream}/history`, ...[1, 2, 3].map((page) => `${stream}/history/e1-${page}`)]);
  });

  it('from a time, from a publisher without a time index (404): its root, which relates to every page', async () => {
    const history = new FakeHistory(3);
    history.latestSeq = 30;
    history.noIndex = true;
    expect((await read(history, timeOf(20))).events).toEqual(ids('e1', 20, 30));
    expect(history.requests.slice(0, 3)).toEqual([`${stream}/history/index`, `${stream}/history`, `${stream}/history/e1-7`]);
  });

  it('from a time at which a page starts: reads the page before it too (it may end at that very time)', async () => {
    const history = new FakeHistory(3);
    history.latestSeq = 30;
    expect((await read(history, timeOf(19))).events).toEqual(ids('e1', 19, 30));
    expect(history.requests[1]).toBe(`${stream}/history/e1-6`);
  });

  it('from a time older than the oldest retained page: starts there, and says `expired` as before', async () => {
    const history = new FakeHistory(3);
    history.oldestSeq = 7;
    history.latestSeq = 12;
    expect((await read(history, timeOf(2))).events).toEqual([{ type: 'gap', afterSeq: undefined, resumedAtSeq: 7, reason: 'expired' }, ...ids('e1', 7, 12)]);
    expect(history.requests[1]).toBe(`${stream}/history/e1-3`);
  });

  it('a cached index naming a page removed within the grace period: the page leads to the oldest retained one, `expired` is said once', async () => {
    const history = new FakeHistory(3);
    history.latestSeq = 30;
    const cachedIndex = history.index();
    // Retention removes pages 1–8 after the index was cached; the removed pages still answer.
    history.oldestSeq = 25;
    history.graceAnswers = true;
    history.overrides.set(`${stream}/history/index`, () => history.nquads(cachedIndex));
    const { events } = await read(history, timeOf(20));
    expect(events).toEqual([{ type: 'gap', afterSeq: undefined, resumedAtSeq: 25, reason: 'expired' }, ...ids('e1', 25, 30)]);
    expect(history.requests).toEqual([`${stream}/history/index`, `${stream}/history/e1-7`, `${stream}/history/e1-9`, `${stream}/history/e1-10`, `${stream}/history/e1-11`]);
  });

  it('a cached root naming an oldest page removed within the grace period: the page leads to the oldest retained one, `expired` is said once', async () => {
    const history = new FakeHistory(3);
    history.latestSeq = 6;
    const cachedRoot = history.root();
    history.oldestSeq = 7;
    history.latestSeq = 11;
    history.graceAnswers = true;
    history.overrides.set(`${stream}/history`, () => history.nquads(cachedRoot));
    const { events } = await read(history, 1);
    expect(events).toEqual([{ type: 'gap', afterSeq: 0, resumedAtSeq: 7, reason: 'expired' }, ...ids('e1', 7, 11)]);
    expect(history.requests).toEqual([`${stream}/history`, `${stream}/history/e1-1`, `${stream}/history/e1-3`, `${stream}/history/e1-4`]);
  });

  it('a page removed within the grace period in the middle of a walk: `expired` between what was read and the oldest retained page', async () => {
    const history = new FakeHistory(2);
    history.latestSeq = 8;
    history.graceAnswers = true;
    history.before = (url) => {
      if (url.endsWith('/history/e1-2') && history.oldestSeq === 1) history.oldestSeq = 5;
    };
    const { events } = await read(history, 1);
    expect(events).toEqual([...ids('e1', 1, 2), { type: 'gap', afterSeq: 2, resumedAtSeq: 5, reason: 'expired' }, ...ids('e1', 5, 8)]);
    expect(history.requests.filter((url) => url.endsWith('/history'))).toHaveLength(1);
  });

  it('a full newest page links to an empty open page: read, and the walk ends there', async () => {
    const history = new FakeHistory(3);
    history.latestSeq = 6;
    const { events, position } = await read(history, 1);
    expect(events).toEqual(ids('e1', 1, 6));
    expect(position.lastSeq).toBe(6);
    expect(history.requests.at(-1)).toBe(`${stream}/history/e1-3`);
  });

  it('nothing to replay: returns the newest element seen, so that live delivery resumes after it', async () => {
    const history = new FakeHistory(3);
    history.latestSeq = 4;
    expect(await read(history, 9)).toMatchObject({ events: [], position: { epoch: 'e1', lastSeq: 4, lastId: 'e1-4' } });
    expect(await read(history, timeOf(60))).toMatchObject({ events: [], position: { lastSeq: 4 } });
  });

  it('an empty log: no element, no position', async () => {
    const history = new FakeHistory(3);
    expect(await read(history, 1)).toEqual({ events: [], position: { epoch: undefined, lastSeq: undefined, lastId: undefined }, stats: expect.anything() });
    expect(history.requests).toEqual([`${stream}/history`]);
  });

  it('says `expired` before the first element when the start is older than the log retains', async () => {
    const history = new FakeHistory(3);
    history.oldestSeq = 4;
    history.latestSeq = 8;
    expect((await read(history, 2)).events).toEqual([{ type: 'gap', afterSeq: 1, resumedAtSeq: 4, reason: 'expired' }, ...ids('e1', 4, 8)]);
    // A time: elements were removed, and the oldest one kept is newer than the start.
    expect((await read(history, timeOf(2))).events).toEqual([{ type: 'gap', afterSeq: undefined, resumedAtSeq: 4, reason: 'expired' }, ...ids('e1', 4, 8)]);
    // Nothing retained was removed after the start: no gap.
    expect((await read(history, timeOf(5))).events).toEqual(ids('e1', 5, 8));
  });

  it('a 410 (retention removed the page after the root linked to it): starts again once, from the index at the newest element read, with no duplicate', async () => {
    const history = new FakeHistory(2);
    history.latestSeq = 6;
    history.before = (url) => {
      // Between reading page 1 and asking for page 2, retention drops pages 1 and 2.
      if (url.endsWith('/history/e1-2') && history.oldestSeq === 1) history.oldestSeq = 5;
    };
    const { events } = await read(history, 1);
    expect(events).toEqual([...ids('e1', 1, 2), { type: 'gap', afterSeq: 2, resumedAtSeq: 5, reason: 'expired' }, ...ids('e1', 5, 6)]);
    expect(history.requests.filter((url) => url.endsWith('/history'))).toHaveLength(1);
    expect(history.requests.filter((url) => url.endsWith('/history/index'))).toHaveLength(1);
  });

  it('a 410 again right after the restart is a SubscriptionError, not a loop', async () => {
    const history = new FakeHistory(2);
    history.latestSeq = 6;
    history.overrides.set(`${stream}/history/e1-1`, () => new Response('', { status: 410 }));
    history.before = (url) => {
      if (url === `${stream}/history` && history.requests.length > 1) history.overrides.set(`${stream}/history/e1-1`, () => new Response('', { status: 410 }));
    };
    const error = await read(history, 1).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SubscriptionError);
    expect((error as SubscriptionError).status).toBe(410);
  });

  it('a new life of the log during the walk: says `epoch` and replays the new one', async () => {
    const history = new FakeHistory(2);
    history.latestSeq = 4;
    history.before = (url) => {
      if (url.endsWith('/history/e1-2') && history.epoch === 'e1') {
        history.epoch = 'e2';
        history.latestSeq = 3;
      }
    };
    const { events, position } = await read(history, 2);
    expect(events).toEqual(['2:e1-2', { type: 'gap', afterSeq: 2, resumedAtSeq: 1, reason: 'epoch' }, ...ids('e2', 1, 3)]);
    expect(position).toEqual({ epoch: 'e2', lastSeq: 3, lastId: 'e2-3' });
  });

  it('retries a 503 and a truncated page with backoff, reported as reconnections', async () => {
    const history = new FakeHistory(3);
    history.latestSeq = 4;
    history.overrides.set(`${stream}/history`, () => new Response('', { status: 503, headers: { 'retry-after': '0' } }));
    history.overrides.set(`${stream}/history/e1-1`, () => new Response(`<${stream}> <${TREE}member> <`, { headers: { 'content-type': 'application/n-quads' } }));
    const { events, stats } = await read(history, 1);
    expect(events.slice(0, 2)).toMatchObject([
      { type: 'reconnect', reason: 'HTTP 503', delayMs: 0 },
      { type: 'reconnect', reason: expect.stringContaining(`${stream}/history/e1-1: `) },
    ]);
    expect(events.slice(2)).toEqual(ids('e1', 1, 4));
    expect(stats.reconnects).toBe(2);
  });

  it('refuses an unknown stream (404 of the root) and a page in a format without graphs', async () => {
    const history = new FakeHistory(3);
    history.overrides.set(`${stream}/history`, () => new Response('{"code":"PUB_ERR_STREAM_NOT_FOUND"}', { status: 404, headers: { 'content-type': 'application/problem+json' } }));
    const notFound = await read(history, 1).catch((caught: unknown) => caught);
    expect(notFound).toMatchObject({ name: 'SubscriptionError', status: 404, problem: { code: 'PUB_ERR_STREAM_NOT_FOUND' } });
    history.overrides.set(`${stream}/history`, () => new Response('', { headers: { 'content-type': 'text/turtle' } }));
    await expect(read(history, 1)).rejects.toThrow(/N-Quads or TriG/);
  });

  it('hands its abort signal to every fetch, and stops when it aborts', async () => {
    const history = new FakeHistory(2);
    history.latestSeq = 6;
    const stop = new AbortController();
    history.before = (url) => {
      if (url.endsWith('/history/e1-2')) stop.abort();
    };
    const { events } = await read(history, 1, stop.signal);
    expect(events).toEqual(ids('e1', 1, 2));
    expect(history.signals.every((signal) => signal === stop.signal)).toBe(true);
  });

  it('reads each node once: a cycle of relations ends the walk', async () => {
    const history = new FakeHistory(2);
    history.latestSeq = 4;
    const cyclic = `<${stream}/history/e1-2> <${TREE}relation> _:r .\n_:r <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${TREE}GreaterThanOrEqualToRelation> .\n_:r <${TREE}node> <${stream}/history/e1-1> .\n`;
    history.overrides.set(`${stream}/history/e1-2`, () => new Response(cyclic, { headers: { 'content-type': 'application/n-quads' } }));
    const { events } = await read(history, 1);
    expect(events).toEqual(ids('e1', 1, 2));
    expect(history.requests.filter((url) => url.endsWith('/e1-1'))).toHaveLength(1);
  });
});
