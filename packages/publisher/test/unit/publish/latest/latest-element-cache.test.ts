import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { formatNames } from '@rdf-stream/protocol';
import { loadBundledContext } from '../../../../src/model/bundled-context.js';
import { elementQuads } from '../../../../src/model/observation.js';
import { LatestElementCache, latestDocument, latestElement } from '../../../../src/publish/latest/latest-element-cache.js';
import { LongPollWaiters } from '../../../../src/publish/latest/long-poll-waiters.js';
import { JsonLdWriter } from '../../../../src/render/jsonld-writer.js';
import { type LoggedElement, renderElement } from '../../../../src/render/render-element.js';
import { sampleObservations } from '../../../../src/testing/sample-observations.js';
import { parseRdf } from '../../../support/rdf.js';

const base = 'http://127.0.0.1:8080';
const stream = `${base}/streams/parking`;
const jsonLd = new JsonLdWriter(loadBundledContext().document, `${base}/contexts/sosa-stream.jsonld`);
const epoch = 'e1';

function element(seq: number): LoggedElement {
  const graph = `${stream}/elements/${epoch}-${seq}`;
  const generatedAt = new Date(Date.UTC(2026, 10, 22, 16, 0, seq));
  return renderElement({ streamId: 'parking', epoch, seq, graph, generatedAt, quads: elementQuads(graph, generatedAt, sampleObservations(stream, [seq, 2 * seq])) }, jsonLd);
}

const ignoreErrors = () => {};

describe('latestDocument', () => {
  const logged = element(3);

  it('N-Quads and TriG carry the observations in the default graph and the element in its named graph', async () => {
    for (const format of ['nquads', 'trig'] as const) {
      const quads = await parseRdf(format, latestDocument(logged, format).toString());
      const inDefault = quads.filter((q) => q.graph.termType === 'DefaultGraph');
      const inElement = quads.filter((q) => q.graph.value === logged.graph);
      expect(inDefault.length, format).toBeGreaterThan(0);
      // The same triples in both: a plain SPARQL query over the default graph sees the observations.
      const triple = (q: (typeof quads)[number]) => `${q.subject.value} ${q.predicate.value} ${q.object.value}`;
      expect(new Set(inElement.map(triple)), format).toEqual(new Set(inDefault.filter((q) => q.subject.value !== logged.graph).map(triple)));
    }
  });

  it('JSON-LD puts the observations at top level beside the named-graph node, under one context', () => {
    const document = JSON.parse(latestDocument(logged, 'jsonld').toString()) as { '@context': unknown; '@graph': Array<Record<string, unknown>> };
    expect(document['@context']).toBe(`${base}/contexts/sosa-stream.jsonld`);
    const elementNode = document['@graph'].at(-1)!;
    expect(elementNode['@id']).toBe(logged.graph);
    expect(Array.isArray(elementNode['@graph'])).toBe(true);
    // Every node of the element's graph also stands at top level.
    expect(document['@graph'].length).toBe((elementNode['@graph'] as unknown[]).length + 1);
  });

  it('Turtle is the data of its SSE frame, with its final newline', () => {
    const text = latestDocument(logged, 'turtle').toString();
    expect(text.endsWith('\n')).toBe(true);
    expect(text).not.toMatch(/^data: /m);
    expect(text).toContain(logged.graph);
  });
});

describe('latestElement', () => {
  it('compresses every format once per coding, each with its own entity tag', async () => {
    const logged = element(5);
    const latest = await latestElement(logged, epoch, ignoreErrors);
    expect(latest).toMatchObject({ seq: 5, graph: logged.graph, generatedAt: logged.generatedAt, compressed: true });
    const etags = new Set<string>();
    for (const format of formatNames) {
      const { br, gzip, identity } = latest.bodies[format];
      expect(identity.equals(latestDocument(logged, format)), format).toBe(true);
      expect(gunzipSync(gzip).equals(identity), format).toBe(true);
      expect(brotliDecompressSync(br).equals(identity), format).toBe(true);
      for (const tag of Object.values(latest.etags[format])) etags.add(tag);
    }
    expect(etags.size).toBe(formatNames.length * 3);
  });
});

describe('LatestElementCache', () => {
  function cache() {
    const waiters = new LongPollWaiters(10);
    const latestCache = new LatestElementCache(epoch, waiters, ignoreErrors);
    const served: number[] = [];
    latestCache.onServed((latest) => served.push(latest.seq));
    return { latestCache, waiters, served };
  }

  it('serves an offered element once compressed, and tells its listeners', async () => {
    const { latestCache, served } = cache();
    expect(latestCache.current).toBeUndefined();
    latestCache.offer(element(1));
    await latestCache.reached(1);
    expect(latestCache.current?.seq).toBe(1);
    expect(served).toEqual([1]);
  });

  it('coalesces: elements superseded while one compresses are never served', async () => {
    const { latestCache, served } = cache();
    latestCache.offer(element(1));
    latestCache.offer(element(2));
    latestCache.offer(element(3));
    await latestCache.reached(3);
    expect(served).toEqual([1, 3]);
  });

  it('ignores an element older than the one it serves', async () => {
    const { latestCache, served } = cache();
    latestCache.offer(element(2));
    await latestCache.reached(2);
    latestCache.offer(element(1));
    latestCache.set(await latestElement(element(1), epoch, ignoreErrors));
    expect(latestCache.current?.seq).toBe(2);
    expect(served).toEqual([2]);
  });

  it('serves what a replica is given at once, and drops a pending older offer', async () => {
    const { latestCache, served } = cache();
    const compressedElsewhere = await latestElement(element(4), epoch, ignoreErrors);
    latestCache.offer(element(3));
    latestCache.set(compressedElsewhere);
    expect(latestCache.current).toBe(compressedElsewhere);
    // The offer of 3 was compressing already: it finishes, but is older, so it is never served;
    // the next offer is compressed after it.
    latestCache.offer(element(5));
    await latestCache.reached(5);
    expect(served).toEqual([4, 5]);
  });

  describe('prepare (compression started while the append is made durable)', () => {
    /** A cache whose compressions are counted, each resolved when the test says. */
    function counted() {
      const waiters = new LongPollWaiters(10);
      const started: Array<{ seq: number; finish: () => void }> = [];
      const compress = (logged: LoggedElement, at: string, onError: (error: unknown) => void) =>
        new Promise<Awaited<ReturnType<typeof latestElement>>>((resolve) => started.push({ seq: logged.seq, finish: () => resolve(latestElement(logged, at, onError)) }));
      const latestCache = new LatestElementCache(epoch, waiters, ignoreErrors, compress);
      const served: number[] = [];
      latestCache.onServed((latest) => served.push(latest.seq));
      return { latestCache, started, served };
    }

    it('serves a prepared element as soon as it is offered, without compressing it again', async () => {
      const { latestCache, started, served } = counted();
      const logged = element(1);
      latestCache.prepare(logged);
      started[0]!.finish();
      await new Promise((resolve) => setImmediate(resolve));
      expect(served).toEqual([]); // not durable yet: not served
      latestCache.offer(logged);
      await latestCache.reached(1);
      expect(started.map((compression) => compression.seq)).toEqual([1]);
      expect(served).toEqual([1]);
    });

    it('uses the preparation of an equal element a shared log decoded, and never that of another element of the same number', async () => {
      const { latestCache, started } = counted();
      const logged = element(2);
      latestCache.prepare(logged);
      started[0]!.finish();
      const decoded: LoggedElement = { ...logged, documents: Object.fromEntries(formatNames.map((format) => [format, Buffer.from(logged.documents[format])])) as LoggedElement['documents'] };
      latestCache.offer(decoded);
      await latestCache.reached(2);
      expect(started).toHaveLength(1);
      // Another instance won number 3 with other documents: what this one prepared for 3 is not served.
      const mine = element(3);
      const theirs: LoggedElement = { ...mine, documents: { ...mine.documents, turtle: Buffer.from(`${mine.documents.turtle.toString()}# theirs\n`) } };
      latestCache.prepare(mine);
      started[1]!.finish();
      latestCache.offer(theirs);
      await new Promise((resolve) => setImmediate(resolve));
      expect(started.map((compression) => compression.seq)).toEqual([2, 3, 3]);
      started[2]!.finish();
      await latestCache.reached(3);
      expect(latestCache.current!.bodies.turtle.identity.toString()).toMatch(/# theirs/);
    });

    it('prepares one element at a time: those rendered meanwhile are compressed when offered, coalesced', async () => {
      const { latestCache, started, served } = counted();
      const [one, two, three] = [element(1), element(2), element(3)];
      latestCache.prepare(one);
      latestCache.prepare(two); // the first still compresses: not prepared
      expect(started.map((compression) => compression.seq)).toEqual([1]);
      latestCache.offer(one);
      latestCache.offer(two);
      latestCache.offer(three);
      started[0]!.finish();
      await latestCache.reached(1);
      // 2 was superseded while 1 was served: only 3 is compressed next.
      await new Promise((resolve) => setImmediate(resolve));
      expect(started.map((compression) => compression.seq)).toEqual([1, 3]);
      started[1]!.finish();
      await latestCache.reached(3);
      expect(served).toEqual([1, 3]);
    });

    it('drops a preparation when the log starts a new life', async () => {
      const { latestCache, started } = counted();
      const logged = element(1);
      latestCache.prepare(logged);
      started[0]!.finish();
      latestCache.restart('e2');
      latestCache.offer(logged);
      await new Promise((resolve) => setImmediate(resolve));
      expect(started).toHaveLength(2);
      started[1]!.finish();
      await latestCache.reached(1);
      expect(latestCache.current!.etags.turtle.identity).toMatch(/e2/);
    });
  });

  it('resolves `reached(seq)` only once that element or a newer one is served', async () => {
    const { latestCache } = cache();
    const order: string[] = [];
    const reachedTwo = latestCache.reached(2).then(() => order.push('reached 2'));
    latestCache.offer(element(1));
    await latestCache.reached(1);
    order.push('served 1');
    latestCache.offer(element(2));
    await reachedTwo;
    expect(order).toEqual(['served 1', 'reached 2']);
  });

  it('releases held long-polls when it serves a new element', async () => {
    const { latestCache, waiters } = cache();
    const held = waiters.wait(60_000, new AbortController().signal);
    expect(waiters.size).toBe(1);
    latestCache.offer(element(1));
    expect(await held).toBe('element');
    expect(waiters.size).toBe(0);
  });
});
