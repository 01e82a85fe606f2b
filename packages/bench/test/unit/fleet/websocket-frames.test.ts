import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { clientFrame, closeFrame, FrameReader, handshakeKey, OPCODE, serverFrameBytes } from '../../../src/fleet/websocket-frames.js';

/** A server frame as RFC 6455 §5.2 lays it out: unmasked, 7-bit, 16-bit or 64-bit length. */
function serverFrame(opcode: number, payload: Buffer, fin = true): Buffer {
  const length = payload.length;
  const header = length < 126 ? Buffer.from([0, length]) : length < 65_536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (length >= 126 && length < 65_536) {
    header[1] = 126;
    header.writeUInt16BE(length, 2);
  } else if (length >= 65_536) {
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  header[0] = (fin ? 0x80 : 0) | opcode;
  return Buffer.concat([header, payload]);
}

function recorder(maxMessageBytes = 1 << 20) {
  const seen: Array<[string, string]> = [];
  const reader = new FrameReader(
    {
      onMessage: (opcode, payload) => seen.push([opcode === OPCODE.text ? 'text' : 'binary', payload.toString('utf8')]),
      onPing: (payload) => seen.push(['ping', payload.toString('utf8')]),
      onClose: (code, reason) => seen.push(['close', `${code} ${reason}`]),
      onProtocolError: (message) => seen.push(['error', message]),
    },
    maxMessageBytes,
  );
  return { reader, seen };
}

describe('FrameReader', () => {
  it('reads messages of each length encoding, several in one chunk', () => {
    const { reader, seen } = recorder();
    const medium = 'm'.repeat(5_400);
    const large = 'l'.repeat(70_000);
    reader.push(Buffer.concat([serverFrame(OPCODE.text, Buffer.from('element 1-1\nshort')), serverFrame(OPCODE.text, Buffer.from(medium)), serverFrame(OPCODE.text, Buffer.from(large))]));
    expect(seen).toEqual([['text', 'element 1-1\nshort'], ['text', medium], ['text', large]]);
  });

  it('reads a frame split anywhere across chunks, down to one byte at a time', () => {
    const frames = Buffer.concat([serverFrame(OPCODE.text, Buffer.from('x'.repeat(300))), serverFrame(OPCODE.text, Buffer.from('é ü'))]);
    for (const size of [1, 2, 3, 7, 150, 301]) {
      const { reader, seen } = recorder();
      for (let offset = 0; offset < frames.length; offset += size) reader.push(frames.subarray(offset, offset + size));
      expect(seen, `chunks of ${size}`).toEqual([['text', 'x'.repeat(300)], ['text', 'é ü']]);
    }
  });

  it('joins a fragmented message, with a ping between its fragments', () => {
    const { reader, seen } = recorder();
    reader.push(serverFrame(OPCODE.text, Buffer.from('element 1-2\n'), false));
    reader.push(serverFrame(OPCODE.ping, Buffer.from('hb')));
    reader.push(serverFrame(OPCODE.continuation, Buffer.from('body '), false));
    reader.push(serverFrame(OPCODE.continuation, Buffer.from('end')));
    expect(seen).toEqual([['ping', 'hb'], ['text', 'element 1-2\nbody end']]);
  });

  it('gives the close frame\'s code and reason, and 1005 when it has none', () => {
    const payload = Buffer.concat([Buffer.from([0x03, 0xf4]), Buffer.from('{"retryMs":500}')]);
    const { reader, seen } = recorder();
    reader.push(serverFrame(OPCODE.close, payload));
    reader.push(serverFrame(OPCODE.close, Buffer.alloc(0)));
    expect(seen).toEqual([['close', '1012 {"retryMs":500}'], ['close', '1005 ']]);
  });

  it('refuses a masked server frame, a message over its limit, and a continuation out of a message', () => {
    const masked = serverFrame(OPCODE.text, Buffer.from('abc'));
    masked[1] = (masked[1] as number) | 0x80;
    const cases: Array<[Buffer, RegExp]> = [
      [masked, /masked/],
      [serverFrame(OPCODE.text, Buffer.alloc(101)), /101 bytes, over 100/],
      [Buffer.concat([serverFrame(OPCODE.text, Buffer.alloc(60), false), serverFrame(OPCODE.continuation, Buffer.alloc(60))]), /message over 100 bytes/],
      [serverFrame(OPCODE.continuation, Buffer.from('x')), /continuation frame outside a message/],
    ];
    for (const [bytes, message] of cases) {
      const { reader, seen } = recorder(100);
      reader.push(bytes);
      expect(seen).toHaveLength(1);
      expect(seen[0]?.[0]).toBe('error');
      expect(seen[0]?.[1]).toMatch(message);
    }
  });

  it('refuses a frame over the limit from its header alone, before its payload arrives', () => {
    const { reader, seen } = recorder(100);
    reader.push(serverFrame(OPCODE.text, Buffer.alloc(70_000)).subarray(0, 10));
    expect(seen).toEqual([['error', 'a frame of 70000 bytes, over 100']]);
  });
});

describe('client frames and the handshake', () => {
  it('masks a control frame: FIN, opcode, mask bit, 4-byte key, payload XOR key', () => {
    const frame = clientFrame(OPCODE.pong, Buffer.from('hb'));
    expect(frame[0]).toBe(0x8a);
    expect(frame[1]).toBe(0x82);
    const mask = frame.subarray(2, 6);
    const unmasked = Buffer.from(frame.subarray(6).map((byte, index) => byte ^ (mask[index % 4] as number)));
    expect(unmasked.toString()).toBe('hb');
    const close = closeFrame(1000);
    const closeMask = close.subarray(2, 6);
    expect(Buffer.from(close.subarray(6).map((byte, index) => byte ^ (closeMask[index % 4] as number))).readUInt16BE(0)).toBe(1000);
  });

  it('expects the accept value RFC 6455 derives from the key', () => {
    const { key, accept } = handshakeKey();
    expect(Buffer.from(key, 'base64')).toHaveLength(16);
    expect(accept).toBe(createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64'));
  });

  it('sizes a server frame: 2, 4 or 10 bytes of header', () => {
    expect(serverFrameBytes(125)).toBe(127);
    expect(serverFrameBytes(5_400)).toBe(5_404);
    expect(serverFrameBytes(70_000)).toBe(70_010);
  });
});
