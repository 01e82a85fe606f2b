import { DataFactory } from 'n3';
import { describe, expect, it } from 'vitest';
import { LogAppendError } from '../../../src/log/event-log.js';
import { MemoryEventLog } from '../../../src/log/memory-event-log.js';
import { loadBundledContext } from '../../../src/model/bundled-context.js';
import { ElementWriter } from '../../../src/publish/element-writer.js';
import type { StreamMetrics } from '../../../src/publish/stream-metrics.js';
import { JsonLdWriter } from '../../../src/render/jsonld-writer.js';
import type { LoggedElement } from '../../../src/render/render-element.js';
import { frameDocument } from '../../../src/render/sse-frame.js';
import { noMetrics } from '../../support/no-metrics.js';
import { sampleObservations } from '../../support/publisher-fixture.js';
import { parseRdf } from '../../support/rdf.js';

const { namedNode, blankNode, literal, quad } = DataFactory;
const baseUrl = 'http://127.0.0.1:8080';
const stream = `${baseUrl}/streams/parking`;
const jsonLd = new JsonLdWriter(loadBundledContext().document, `${baseUrl}/contexts/sosa-stream.jsonld`);

function setup(log = new MemoryEventLog(10, { retainedElements: 100, retainedSeconds: 0 }, { epoch: 'e1' })) {
  const published: string[] = [];
  const metrics: StreamMetrics = { ...noMetrics, elementPublished: (streamId) => void published.push(streamId) };
  return { log, published, writer: new ElementWriter({ baseUrl, streamId: 'parking', log, jsonLd, metrics }) };
}

const turtleOf = (element: LoggedElement) => parseRdf('turtle', frameDocument(element.frames.turtle, true));

describe('ElementWriter', () => {
  it('numbers elements in the order of the calls, appends them and counts each once durable', async () => {
    const { log, published, writer } = setup();
    const at = new Date(Date.UTC(2026, 10, 22, 16));
    const elements = await Promise.all([1, 2, 3].map((value) => writer.publish(sampleObservations(stream, [value]), at)));
    expect(elements.map((element) => element.seq)).toEqual([1, 2, 3]);
    expect(elements.map((element) => element.graph)).toEqual([1, 2, 3].map((seq) => `${stream}/elements/e1-${seq}`));
    expect(log.latestSeq).toBe(3);
    expect(await log.get(2)).toBe(elements[1]);
    expect(published).toEqual(['parking', 'parking', 'parking']);
  });

  it("renders the element's graph with its observations and its generation time", async () => {
    const { writer } = setup();
    const at = new Date(Date.UTC(2026, 10, 22, 16, 30));
    const element = await writer.publish(sampleObservations(stream, [7]), at);
    expect(element.generatedAt).toBe(at);
    const quads = await turtleOf(element);
    expect(quads.some((q) => q.subject.value === element.graph && q.object.value === at.toISOString())).toBe(true);
    expect(quads.length).toBeGreaterThan(1);
  });

  it('skolemises the blank nodes of ingested triples under a genid IRI naming the element, and keeps the idempotency stamp', async () => {
    const { log, writer } = setup();
    const observation = blankNode('b0');
    const triples = [
      quad(observation, namedNode('http://www.w3.org/ns/sosa/hasSimpleResult'), literal('42')),
      quad(observation, namedNode('http://www.w3.org/ns/sosa/madeBySensor'), namedNode(`${baseUrl}/sensor/1`)),
    ];
    const idempotency = { key: 'retry-me', fingerprint: 'abc' };
    const element = await writer.publishTriples(triples, new Date(), idempotency);
    expect(element.idempotency).toEqual(idempotency);
    expect((await log.get(1))?.idempotency).toEqual(idempotency);
    const quads = await turtleOf(element);
    expect(quads.some((q) => q.subject.termType === 'BlankNode')).toBe(false);
    const skolemised = quads.filter((q) => q.predicate.value === 'http://www.w3.org/ns/sosa/hasSimpleResult');
    expect(skolemised.map((q) => q.subject.value)).toEqual([`${baseUrl}/.well-known/genid/parking/e1-1/1`]);
  });

  it('rejects, counting nothing, when the append fails', async () => {
    const log = new MemoryEventLog(10, { retainedElements: 100, retainedSeconds: 0 });
    const failure = new LogAppendError('disk full', 'ENOSPC');
    log.append = () => Promise.reject(failure);
    const { published, writer } = setup(log);
    await expect(writer.publish(sampleObservations(stream, [1]), new Date())).rejects.toBe(failure);
    expect(published).toEqual([]);
  });

  it('rejects, appending nothing, when rendering fails', async () => {
    const { log, writer } = setup();
    await expect(writer.publish(sampleObservations(stream, [1]), new Date(Number.NaN))).rejects.toThrow();
    expect(log.latestSeq).toBe(0);
  });
});
