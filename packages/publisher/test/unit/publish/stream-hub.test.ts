import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryEventLog } from '../../../src/log/memory-event-log.js';
import { loadBundledContext } from '../../../src/model/bundled-context.js';
import { latestElement } from '../../../src/publish/latest/latest-element-cache.js';
import { type StreamDefinition, StreamHub, type StreamHubOptions } from '../../../src/publish/stream-hub.js';
import type { StreamMetrics } from '../../../src/publish/stream-metrics.js';
import { elementQuads, type Observation } from '../../../src/model/observation.js';
import { EventStreamEncoder } from '../../../src/render/event-stream-encoder.js';
import { JsonLdWriter } from '../../../src/render/jsonld-writer.js';
import { type LoggedElement, renderElement } from '../../../src/render/render-element.js';
import type { ObservationSink } from '../../../src/source/element-source.js';
import { ManualSource } from '../../../src/source/manual-source.js';
import { FakeSink } from '../../support/fake-sink.js';
import { noMetrics } from '../../support/no-metrics.js';
import { sampleObservations } from '../../../src/testing/sample-observations.js';
import { patience } from '../../support/patience.js';

const baseUrl = 'http://127.0.0.1:8080';
const definition: StreamDefinition = {
  id: 'parking',
  title: 'Parking',
  iri: `${baseUrl}/streams/parking`,
  expectedIntervalMs: 1_000,
  retainedElements: 100,
  retainedSeconds: 0,
};
const jsonLd = new JsonLdWriter(loadBundledContext().document, `${baseUrl}/contexts/sosa-stream.jsonld`);
const limits = {
  broadcastBatchSize: 100,
  maxSubscribers: 10,
  maxSubscriberQueueBytes: 1 << 20,
  subscriberStallTimeoutMs: 60_000,
  subscriberProgressCheckMs: 0,
  catchUpBatchElements: 10,
  wsPongTimeoutMs: 60_000,
  maxLongPollWaiters: 10,
  maxDescribedResources: 100,
};

/** An element as the writer renders it (what a restored log holds, what a replica receives). */
function rendered(seq: number): LoggedElement {
  const graph = `${definition.iri}/elements/e1-${seq}`;
  const generatedAt = new Date(Date.UTC(2026, 10, 22, 16, 0, seq));
  return renderElement({ streamId: 'parking', epoch: 'e1', seq, graph, generatedAt, quads: elementQuads(graph, generatedAt, sampleObservations(definition.iri, [seq])) }, jsonLd);
}

/** A source that produces its first observations as soon as it starts, as the simulator does. */
class EagerSource extends ManualSource {
  constructor(readonly first: readonly Observation[]) {
    super(1_000);
  }

  override start(sink: ObservationSink): void {
    super.start(sink);
    this.push(this.first);
  }
}

const hubs: StreamHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((hub) => hub.stop()));
});

function hub(options: Partial<StreamHubOptions> = {}) {
  const log = options.log ?? new MemoryEventLog(10, { retainedElements: 100, retainedSeconds: 0 }, { epoch: 'e1' });
  const source = new ManualSource(1_000);
  const errors: unknown[] = [];
  const created = new StreamHub({ baseUrl, definition, source, log, jsonLd, metrics: noMetrics, limits, onError: (error) => errors.push(error), ...options });
  hubs.push(created);
  return { hub: created, log, source, errors };
}

const live = () => ({ kind: 'live' }) as const;

describe('StreamHub', () => {
  it('resolves a publish once the element is durable and /latest serves it', async () => {
    const { hub: stream, log } = hub();
    const element = await stream.publish(sampleObservations(definition.iri, [1]), new Date());
    expect(element.seq).toBe(1);
    expect(log.latestSeq).toBe(1);
    expect(stream.latest?.seq).toBe(1);
  });

  it('broadcasts a durable element to live subscribers', async () => {
    const { hub: stream } = hub();
    const sink = new FakeSink();
    const subscriber = stream.subscribe(sink, 'turtle', new EventStreamEncoder('identity'), live());
    await vi.waitFor(() => expect(subscriber.live).toBe(true), patience);
    const element = await stream.publish(sampleObservations(definition.iri, [2]), new Date());
    await vi.waitFor(() => expect(sink.received.join('')).toContain(`id: e1-${element.seq}`), patience);
  });

  it("publishes what its source produces once started; `start` waits for a first element produced at once", async () => {
    const { hub: eager } = hub({ source: new EagerSource(sampleObservations(definition.iri, [3])) });
    await eager.start();
    expect(eager.latest?.seq).toBe(1);
    const { hub: stream, source } = hub();
    await stream.start();
    expect(stream.log.latestSeq).toBe(0);
    source.push(sampleObservations(definition.iri, [3]));
    await stream.latestCache.reached(1);
    expect(stream.log.latestSeq).toBe(1);
  });

  it("serves a restored log's last element before its source produces more", async () => {
    const log = new MemoryEventLog(10, { retainedElements: 100, retainedSeconds: 0 }, { epoch: 'e1' });
    await log.append(rendered(1));
    await log.append(rendered(2));
    const { hub: stream } = hub({ log });
    await stream.start();
    expect(stream.latest?.seq).toBe(2);
  });

  it('counts published elements and long-poll waiters under its stream id', async () => {
    const counted: string[] = [];
    const metrics: StreamMetrics = {
      ...noMetrics,
      elementPublished: (streamId) => void counted.push(`published ${streamId}`),
      longPollWaitersChanged: (streamId, count) => void counted.push(`waiters ${streamId} ${count}`),
    };
    const { hub: stream } = hub({ metrics });
    const held = stream.waiters.wait(60_000, new AbortController().signal);
    await stream.publish(sampleObservations(definition.iri, [4]), new Date());
    expect(await held).toBe('element');
    expect(counted).toEqual(['waiters parking 1', 'published parking', 'waiters parking 0']);
  });

  it('observes how long after its generation /latest serves each element produced while it runs, not the one the log held at start-up', async () => {
    const log = new MemoryEventLog(10, { retainedElements: 100, retainedSeconds: 0 }, { epoch: 'e1' });
    await log.append(rendered(1));
    const served: Array<{ streamId: string; delaySeconds: number }> = [];
    const { hub: stream } = hub({ log, metrics: { ...noMetrics, elementServed: (streamId, delaySeconds) => void served.push({ streamId, delaySeconds }) } });
    await stream.start();
    expect(stream.latest?.seq).toBe(1);
    expect(served).toEqual([]);
    const generatedAt = new Date(Date.now() - 1_500);
    const before = Date.now();
    await stream.publish(sampleObservations(definition.iri, [4]), generatedAt);
    await stream.latestCache.reached(2);
    const after = Date.now();
    expect(served).toHaveLength(1);
    expect(served[0]!.streamId).toBe('parking');
    expect(served[0]!.delaySeconds).toBeGreaterThanOrEqual((before - generatedAt.getTime()) / 1000);
    expect(served[0]!.delaySeconds).toBeLessThanOrEqual((after - generatedAt.getTime()) / 1000);
  });

  describe('as a replica', () => {
    it('refuses to publish: only the writer numbers elements', () => {
      const { hub: stream } = hub({ role: 'replica' });
      expect(() => stream.publish(sampleObservations(definition.iri, [1]), new Date())).toThrow(/appended by the writer/);
    });

    it("appends the writer's elements and serves the writer's /latest as given, without compressing its own", async () => {
      const log = new MemoryEventLog(10, { retainedElements: 100, retainedSeconds: 0 }, { epoch: 'e1', replica: true });
      const { hub: stream } = hub({ role: 'replica', log });
      const sink = new FakeSink();
      const subscriber = stream.subscribe(sink, 'turtle', new EventStreamEncoder('identity'), live());
      await vi.waitFor(() => expect(subscriber.live).toBe(true), patience);
      await stream.replicate(rendered(5));
      await vi.waitFor(() => expect(sink.received.join('')).toContain('id: e1-5'), patience);
      const compressed = await latestElement(rendered(5), 'e1', () => {});
      // As long as a compression takes: the replica compressed nothing of its own meanwhile.
      expect(stream.latest).toBeUndefined();
      stream.replicateLatest(compressed);
      expect(stream.latest).toBe(compressed);
    });
  });
});
