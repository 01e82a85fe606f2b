import { describe, expect, it } from 'vitest';
import { loadBundledContext } from '../../../../src/model/bundled-context.js';
import { MemoryEventLog } from '../../../../src/log/memory-event-log.js';
import { elementQuads } from '../../../../src/model/observation.js';
import { patchFrame, patchWebSocketFrames, preparePatch } from '../../../../src/publish/sse/element-patches.js';
import { constants, inflateRawSync } from 'node:zlib';
import { JsonLdWriter } from '../../../../src/render/jsonld-writer.js';
import type { GzipFragment } from '../../../../src/render/gzip-fragment.js';
import { renderFrames } from '../../../../src/render/render-element.js';
import { deflateMessage, textFrame } from '../../../../src/render/websocket-frame.js';
import { loggedElement } from '../../../support/logged-element.js';
import { sampleObservations } from '../../../support/publisher-fixture.js';

const stream = 'http://127.0.0.1:8080/streams/parking';
const CONTEXT_URL = 'http://127.0.0.1:8080/contexts/sosa-stream.jsonld';

describe('preparePatch', () => {
  it('builds each patch once per element: every subscriber, identity, gzip or WebSocket, gets the same bytes', async () => {
    const log = new MemoryEventLog(8, { retainedElements: 100, retainedSeconds: 0 });
    const jsonLd = new JsonLdWriter(loadBundledContext().document, CONTEXT_URL);
    for (const [index, values] of [[1, 2], [1, 3]].entries()) {
      const seq = index + 1;
      const graph = `${stream}/elements/${log.epoch}-${seq}`;
      await log.append(renderFrames({ streamId: 'parking', epoch: log.epoch, seq, graph, generatedAt: new Date(seq * 1000), quads: elementQuads(graph, new Date(seq * 1000), sampleObservations(stream, values)) }, jsonLd));
    }
    const element = (await log.get(2))!;
    expect(() => patchFrame(element, 'identity')).toThrow(/not prepared/);
    await preparePatch(element, log);
    const identity = patchFrame(element, 'identity') as Buffer;
    await preparePatch(element, log);
    expect(patchFrame(element, 'identity')).toBe(identity);
    const gzip = patchFrame(element, 'gzip');
    expect(patchFrame(element, 'gzip')).toBe(gzip);
    const text = identity.toString();
    expect(text).toMatch(new RegExp(`^id: ${log.epoch}-2\\n`));
    // Observations named in their element: every triple of element 1 leaves, every one of 2 enters (1 + 2 × 6).
    expect(text.match(/^data: D /gm)).toHaveLength(13);
    expect(text.match(/^data: A /gm)).toHaveLength(13);
    expect(text).toContain(`data: H prev <${stream}/elements/${log.epoch}-1> .`);
    expect(text).toContain(`data: D <${stream}/elements/${log.epoch}-1#p2> <http://www.w3.org/ns/sosa/hasSimpleResult> "2"`);
    expect(inflateRawSync((gzip as GzipFragment).bytes, { finishFlush: constants.Z_SYNC_FLUSH }).toString()).toBe(text);

    // The data WebSocket's message (`/ws?format=patch`): `element {id}` and the SSE data payload, made once, deflated once.
    const unprepared = (await log.get(1))!;
    expect(() => patchWebSocketFrames(unprepared)).toThrow(/not prepared/);
    const frames = patchWebSocketFrames(element);
    expect(patchWebSocketFrames(element)).toBe(frames);
    const data = text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice('data: '.length)).join('\n');
    const message = Buffer.from(`element ${log.epoch}-2\n${data}`);
    expect(frames.plain).toEqual(textFrame(message));
    const deflated = frames.deflated();
    expect(frames.deflated()).toBe(deflated);
    expect(deflated.subarray(deflated.length - deflateMessage(message).length)).toEqual(deflateMessage(message));
  });

  it('makes a frame it cannot read back a patch that follows nothing, so that clients read the snapshot again', async () => {
    const log = new MemoryEventLog(8, { retainedElements: 100, retainedSeconds: 0 });
    // Frames that are no N-Triples at all.
    for (const seq of [1, 2]) await log.append(loggedElement(seq, undefined, log.epoch));
    const element = (await log.get(2))!;
    await preparePatch(element, log);
    expect((patchFrame(element, 'identity') as Buffer).toString()).toBe(`id: ${log.epoch}-2\ndata: H id <${element.graph}> .\ndata: TX .\ndata: TC .\n\n`);
  });
});
