import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MemoryEventLog } from '../../../../src/log/memory-event-log.js';
import { loadBundledContext } from '../../../../src/model/bundled-context.js';
import { historyBodyBytes, HistoryPageCache, type HistorySource } from '../../../../src/publish/history/history-page-cache.js';
import { logPosition, pageState } from '../../../../src/publish/history/history-pages.js';
import { JsonLdWriter } from '../../../../src/render/jsonld-writer.js';
import { loggedElement } from '../../../support/logged-element.js';

const jsonLd = new JsonLdWriter(loadBundledContext().document, 'http://127.0.0.1:8080/contexts/sosa-stream.jsonld');

/** A stream of `count` elements in pages of 3, whose log counts its reads. */
async function source(count: number) {
  const log = new MemoryEventLog(3, { retainedElements: 100, retainedSeconds: 0 }, { epoch: 'testepoch' });
  for (let seq = 1; seq <= count; seq++) await log.append(loggedElement(seq));
  const reads = { count: 0 };
  const read = log.read.bind(log);
  log.read = (fromSeq, limit) => {
    reads.count++;
    return read(fromSeq, limit);
  };
  const definition = { id: 'parking', title: 'Parking', iri: 'http://127.0.0.1:8080/streams/parking', expectedIntervalMs: 5000, retainedElements: 100, retainedSeconds: 0 };
  return { stream: { definition, log } satisfies HistorySource, log, reads };
}

const readable = (log: MemoryEventLog, page: number) => {
  const state = pageState(logPosition(log), { epoch: log.epoch, page });
  if (state.kind !== 'open' && state.kind !== 'closed') throw new Error(`page ${page} is ${state.kind}`);
  return state;
};

/** The pages whose start `log` is asked for from now on, in the order asked. */
function pageStartsAsked(log: MemoryEventLog): number[] {
  const asked: number[] = [];
  const pageStartedAt = log.pageStartedAt.bind(log);
  log.pageStartedAt = (page) => {
    asked.push(page);
    return pageStartedAt(page);
  };
  return asked;
}

describe('HistoryPageCache', () => {
  it('reads when each page started once, not at each rendering of the index, and renders the index again only when a page starts', async () => {
    const { stream, log } = await source(7);
    const asked = pageStartsAsked(log);
    const cache = new HistoryPageCache(jsonLd, 0);
    const first = await cache.index(stream, logPosition(log), 'nquads');
    expect(asked).toEqual([1, 2, 3]);
    expect(first?.bodies.identity.toString().match(/tree#relation>/g)).toHaveLength(3);
    // Element 8 joins page 3: the same index.
    await log.append(loggedElement(8));
    expect((await cache.index(stream, logPosition(log), 'nquads'))?.bodies.identity).toBe(first?.bodies.identity);
    // Element 10 starts page 4: only its start is read.
    await log.append(loggedElement(9));
    await log.append(loggedElement(10));
    const second = await cache.index(stream, logPosition(log), 'nquads');
    expect(asked).toEqual([1, 2, 3, 4]);
    expect(second?.bodies.identity.toString().match(/tree#relation>/g)).toHaveLength(4);
  });

  it('the root has one relation, to the oldest retained page, and reads no other page start', async () => {
    const { stream, log } = await source(7);
    const asked = pageStartsAsked(log);
    const cache = new HistoryPageCache(jsonLd, 0);
    const root = (await cache.root(stream, logPosition(log), 'nquads'))?.bodies.identity.toString() ?? '';
    expect(asked).toEqual([1]);
    expect(root.match(/tree#relation>/g)).toHaveLength(1);
    expect(root).toContain('<http://127.0.0.1:8080/streams/parking/history/testepoch-1>');
    expect(root).toContain('<http://127.0.0.1:8080/streams/parking/history> <https://w3id.org/rdf-stream/vocab#timeIndex> <http://127.0.0.1:8080/streams/parking/history/index>');
    // Element 8 joins page 3: the same root.
    await log.append(loggedElement(8));
    expect((await cache.root(stream, logPosition(log), 'nquads'))?.bodies.identity.toString()).toBe(root);
  });

  it('renders a closed page once per format, also for concurrent requests', async () => {
    const { stream, log, reads } = await source(7);
    const cache = new HistoryPageCache(jsonLd, 1024 * 1024);
    const position = logPosition(log);
    const [first, second] = await Promise.all([1, 2].map(() => cache.page(stream, position, readable(log, 1), 'turtle')));
    const third = await cache.page(stream, position, readable(log, 1), 'turtle');
    expect(reads.count).toBe(1);
    expect(second?.bodies.identity).toBe(first?.bodies.identity);
    expect(third?.bodies.identity).toBe(first?.bodies.identity);
    expect(first?.bodies.identity.toString()).toContain('turtle element 3');
    await cache.page(stream, position, readable(log, 1), 'ntriples');
    expect(reads.count).toBe(2);
    expect(cache.cachedBytes).toBeGreaterThan(0);
  });

  it('keeps no more than its bytes (0: nothing)', async () => {
    const { stream, log, reads } = await source(7);
    const cache = new HistoryPageCache(jsonLd, 0);
    for (let i = 0; i < 2; i++) await cache.page(stream, logPosition(log), readable(log, 1), 'turtle');
    expect(reads.count).toBe(2);
    expect(cache.cachedBytes).toBe(0);

    const small = new HistoryPageCache(jsonLd, 2_000);
    for (const page of [1, 2, 1, 2]) await small.page(stream, logPosition(log), readable(log, page), 'turtle');
    expect(small.cachedBytes).toBeLessThanOrEqual(2_000);
  });

  it('memoises the open page until the log moves, and then shows the new element', async () => {
    const { stream, log, reads } = await source(7);
    const cache = new HistoryPageCache(jsonLd, 1024 * 1024);
    await cache.page(stream, logPosition(log), readable(log, 3), 'turtle');
    await cache.page(stream, logPosition(log), readable(log, 3), 'turtle');
    expect(reads.count).toBe(1);
    await log.append(loggedElement(8));
    const moved = await cache.page(stream, logPosition(log), readable(log, 3), 'turtle');
    expect(reads.count).toBe(2);
    expect(moved?.bodies.identity.toString()).toContain('turtle element 8');
  });

  it('answers undefined for a page retention removed after the position was taken', async () => {
    const { stream, log } = await source(7);
    const position = logPosition(log);
    const state = readable(log, 1);
    for (let seq = 8; seq <= 200; seq++) await log.append(loggedElement(seq));
    expect(await new HistoryPageCache(jsonLd, 1024 * 1024).page(stream, position, state, 'turtle')).toBeUndefined();
  });

  it('compresses the root, the index, a full, an open and a removed page once, to br and gzip bodies that decompress to the identity body', async () => {
    const { stream, log } = await source(7);
    const cache = new HistoryPageCache(jsonLd, 1024 * 1024);
    const position = logPosition(log);
    for (const rendered of [
      await cache.root(stream, position, 'trig'),
      await cache.index(stream, position, 'trig'),
      await cache.page(stream, position, readable(log, 1), 'nquads'),
      await cache.page(stream, position, readable(log, 3), 'nquads'),
      await cache.removedPage(stream, position, 0, 'turtle'),
    ]) {
      expect(rendered?.compressed).toBe(true);
      const { identity, br, gzip } = rendered!.bodies;
      expect(br.equals(identity)).toBe(false);
      expect(brotliDecompressSync(br).equals(identity)).toBe(true);
      expect(gunzipSync(gzip).equals(identity)).toBe(true);
    }
  });

  it('counts every coding of a closed page in its bytes, and keeps no more than its limit', async () => {
    const { stream, log, reads } = await source(7);
    const overheadBytes = 256;
    const unbounded = new HistoryPageCache(jsonLd, 1024 * 1024);
    const page1 = await unbounded.page(stream, logPosition(log), readable(log, 1), 'nquads');
    const { identity, br, gzip } = page1!.bodies;
    const entryBytes = identity.length + br.length + gzip.length + overheadBytes;
    expect(historyBodyBytes(page1!)).toBe(identity.length + br.length + gzip.length);
    expect(unbounded.cachedBytes).toBe(entryBytes);

    // Exactly one entry's bytes: it stays; a limit of one byte less than identity + br + gzip keeps nothing.
    const atLimit = new HistoryPageCache(jsonLd, entryBytes);
    await atLimit.page(stream, logPosition(log), readable(log, 1), 'nquads');
    await atLimit.page(stream, logPosition(log), readable(log, 1), 'nquads');
    expect(atLimit.cachedBytes).toBe(entryBytes);
    const below = new HistoryPageCache(jsonLd, entryBytes - 1);
    reads.count = 0;
    await below.page(stream, logPosition(log), readable(log, 1), 'nquads');
    await below.page(stream, logPosition(log), readable(log, 1), 'nquads');
    expect(below.cachedBytes).toBe(0);
    expect(reads.count).toBe(2);
  });

  it('renders and compresses the open page once for concurrent first requests', async () => {
    const { stream, log, reads } = await source(7);
    const cache = new HistoryPageCache(jsonLd, 1024 * 1024);
    const position = logPosition(log);
    const [first, second] = await Promise.all([1, 2].map(() => cache.page(stream, position, readable(log, 3), 'nquads')));
    expect(reads.count).toBe(1);
    expect(second).toBe(first);
    const roots = await Promise.all([1, 2].map(() => cache.root(stream, position, 'nquads')));
    expect(roots[1]).toBe(roots[0]);
  });
});
