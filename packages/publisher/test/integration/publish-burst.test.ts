import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { elementIds, openSse, sampleObservations, startTestPublisher, type TestPublisher } from '../../src/testing.js';

let running: TestPublisher;
beforeAll(async () => {
  running = await startTestPublisher();
});
afterAll(() => running.close());

describe('a burst of elements', () => {
  it('broadcasts every one in order, while /latest moves straight to the newest', async () => {
    const sse = await openSse(`${running.url}/streams/parking/events`);
    const { hub } = running;
    const before = hub.log.latestSeq;
    const published = Array.from({ length: 20 }, (_, index) => hub.publish(sampleObservations(hub.definition.iri, [index]), new Date()));
    const elements = await Promise.all(published);
    expect(elements.map((element) => element.seq)).toEqual(Array.from({ length: 20 }, (_, index) => before + 1 + index));
    // Each promise resolved once /latest served its element or a newer one: the last one is latest now.
    expect(hub.latest?.seq).toBe(before + 20);
    const latest = await fetch(`${running.url}/streams/parking/latest`, { headers: { accept: 'application/n-triples' } });
    expect(await latest.text()).toContain(`"19"^^<http://www.w3.org/2001/XMLSchema#integer>`);
    const events = await sse.waitForEvents(20);
    expect(elementIds(events)).toEqual(elements.map((element) => `${hub.log.epoch}-${element.seq}`));
    sse.close();
  });
});
