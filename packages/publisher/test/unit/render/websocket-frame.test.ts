import { constants, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { formatNames } from '@rdf-stream/protocol';
import * as ws from 'ws';
import {
  closeFrame,
  deflateMessage,
  elementFrames,
  elementMessage,
  gapMessage,
  MAX_CLOSE_REASON_BYTES,
  PING_FRAME,
  textFrame,
} from '../../../src/render/websocket-frame.js';
import { loadBundledContext } from '../../../src/model/bundled-context.js';
import { JsonLdWriter } from '../../../src/render/jsonld-writer.js';
import { renderElement } from '../../../src/render/render-element.js';
import { trimFinalNewline } from '../../../src/render/sse-frame.js';
import { GOLDEN_EPOCH, goldenElement } from '../../support/golden-element.js';

const jsonLd = new JsonLdWriter(loadBundledContext().document, 'http://127.0.0.1:8080/contexts/sosa-stream.jsonld');

/** A server frame read back by ws' own Receiver (as a client reads it), with permessage-deflate when `deflate`. */
function receive(frame: Buffer, deflate: boolean): Promise<string> {
  const { Receiver, PerMessageDeflate } = ws as unknown as {
    Receiver: new (options: object) => NodeJS.WritableStream & { on(event: string, listener: (...args: unknown[]) => void): unknown };
    PerMessageDeflate: new (options: object, isServer: boolean) => { accept(offers: object[]): unknown };
  };
  const extensions: Record<string, unknown> = {};
  if (deflate) {
    const extension = new PerMessageDeflate({}, false);
    extension.accept([{ server_no_context_takeover: [true] }]);
    extensions['permessage-deflate'] = extension;
  }
  const receiver = new Receiver({ isServer: false, extensions, binaryType: 'nodebuffer' });
  return new Promise((resolve, reject) => {
    receiver.on('message', (data, isBinary) => (isBinary ? reject(new Error('binary')) : resolve((data as Buffer).toString())));
    receiver.on('error', reject);
    receiver.write(frame);
  });
}

describe('data WebSocket frames', () => {
  it("deflates a message on its own: a sync flush whose 00 00 ff ff tail is left out, as RFC 7692 asks", () => {
    const payload = Buffer.from('element k-1\n'.repeat(50));
    const deflated = deflateMessage(payload);
    expect(deflated.subarray(-4).equals(Buffer.from([0, 0, 0xff, 0xff]))).toBe(false);
    const restored = inflateRawSync(Buffer.concat([deflated, Buffer.from([0, 0, 0xff, 0xff])]), { finishFlush: constants.Z_SYNC_FLUSH });
    expect(restored.equals(payload)).toBe(true);
  });

  it.each([0, 125, 126, 65_535, 65_536])('frames a %i-byte text message as ws reads it (one buffer, unmasked, FIN)', async (size) => {
    const payload = Buffer.from('x'.repeat(size));
    const frame = textFrame(payload);
    expect(frame[0]).toBe(0x81);
    expect(await receive(frame, false)).toBe(payload.toString());
  });

  it("makes each element's frames once per format, the compressed one on first use, and ws decodes both to the SSE data", async () => {
    const element = renderElement(goldenElement(), jsonLd);
    for (const format of formatNames) {
      const frames = elementFrames(element, format);
      expect(elementFrames(element, format)).toBe(frames);
      expect(frames.deflated()).toBe(frames.deflated());
      expect(frames.deflated()[0]).toBe(0xc1);
      const expected = `element ${GOLDEN_EPOCH}-${element.seq}\n${trimFinalNewline(element.documents[format].toString())}`;
      expect(elementMessage(element, format).toString()).toBe(expected);
      expect(await receive(frames.plain, false)).toBe(expected);
      expect(await receive(frames.deflated(), true)).toBe(expected);
    }
  });

  it('writes a gap as the JSON of the SSE gap event', () => {
    const message = gapMessage({ requestedId: 'a-1', oldestRetained: 'b-1', reason: 'epoch' }).toString();
    expect(message).toBe('gap\n{"requestedId":"a-1","oldestRetained":"b-1","reason":"epoch"}');
  });

  it('pings with an empty ping frame; closes with a code and a reason cut to 123 bytes, never inside a character', () => {
    expect(PING_FRAME.equals(Buffer.from([0x89, 0x00]))).toBe(true);
    const close = closeFrame(1012, '{"retryMs":2000}');
    expect(close[0]).toBe(0x88);
    expect(close.readUInt16BE(2)).toBe(1012);
    expect(close.subarray(4).toString()).toBe('{"retryMs":2000}');
    const long = closeFrame(4008, 'é'.repeat(100));
    expect(long[1]).toBeLessThanOrEqual(2 + MAX_CLOSE_REASON_BYTES);
    expect(long.subarray(4).toString()).toBe('é'.repeat(61));
  });
});
