/**
 * The few parts of RFC 6455 a benchmark client needs, over bytes: the opening handshake's key and
 * its check, reading the server's frames (unmasked, possibly split across or sharing TCP chunks,
 * messages possibly fragmented), and writing the client's masked control frames (pong, close).
 * Thousands of such clients share two cores with the publisher: a frame costs a header read and
 * one copy of its payload; nothing is allocated per connection beyond this reader.
 */
import { createHash, randomBytes } from 'node:crypto';

const HANDSHAKE_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export const OPCODE = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa } as const;

/** A `Sec-WebSocket-Key` (16 random bytes, base64) and the `Sec-WebSocket-Accept` the server must answer. */
export function handshakeKey(): { key: string; accept: string } {
  const key = randomBytes(16).toString('base64');
  return { key, accept: createHash('sha1').update(key + HANDSHAKE_GUID).digest('base64') };
}

export interface FrameHandlers {
  /** A whole data message (text or binary), its fragments joined. */
  onMessage(opcode: number, payload: Buffer): void;
  onPing(payload: Buffer): void;
  /** The server's close frame: its code (1005 when it gave none) and reason. */
  onClose(code: number, reason: string): void;
  /** The stream broke the protocol (a masked frame, an oversized message, a bad fragment): drop the connection. */
  onProtocolError(message: string): void;
}

/**
 * Reads server frames from the bytes of one connection. `maxMessageBytes` bounds a message (and
 * so what this reader buffers): a larger one is a protocol error, as `ws`' `maxPayload` makes it.
 */
export class FrameReader {
  /** Bytes received but not yet a whole frame (bounded: a frame header and at most `maxMessageBytes`). */
  #pending: Buffer | undefined;
  /** Fragments of a message whose final frame has not come yet. */
  #fragments: Buffer[] = [];
  #fragmentsBytes = 0;
  #fragmentOpcode = 0;
  #failed = false;

  constructor(
    private readonly handlers: FrameHandlers,
    private readonly maxMessageBytes: number,
  ) {}

  push(chunk: Buffer): void {
    let data = this.#pending === undefined ? chunk : Buffer.concat([this.#pending, chunk]);
    this.#pending = undefined;
    let offset = 0;
    while (!this.#failed) {
      const consumed = this.#frame(data, offset);
      if (consumed === 0) break;
      offset += consumed;
    }
    if (!this.#failed && offset < data.length) {
      // Keep only the rest, so that a message arriving in many chunks is not copied again and again from its start.
      data = data.subarray(offset);
      this.#pending = offset === 0 ? data : Buffer.from(data);
    }
  }

  /** Reads one frame at `offset`; returns the bytes it took, or 0 when the frame is not whole yet. */
  #frame(data: Buffer, offset: number): number {
    const available = data.length - offset;
    if (available < 2) return 0;
    const first = data[offset] as number;
    const second = data[offset + 1] as number;
    if ((second & 0x80) !== 0) return this.#fail('a server frame is masked');
    let length = second & 0x7f;
    let header = 2;
    if (length === 126) {
      if (available < 4) return 0;
      length = data.readUInt16BE(offset + 2);
      header = 4;
    } else if (length === 127) {
      if (available < 10) return 0;
      const high = data.readUInt32BE(offset + 2);
      if (high !== 0) return this.#fail('a frame over 4 GiB');
      length = data.readUInt32BE(offset + 6);
      header = 10;
    }
    if (length > this.maxMessageBytes) return this.#fail(`a frame of ${length} bytes, over ${this.maxMessageBytes}`);
    if (available < header + length) return 0;
    const payload = data.subarray(offset + header, offset + header + length);
    this.#dispatch((first & 0x80) !== 0, first & 0x0f, payload);
    return header + length;
  }

  #dispatch(fin: boolean, opcode: number, payload: Buffer): void {
    switch (opcode) {
      case OPCODE.text:
      case OPCODE.binary:
        if (this.#fragments.length > 0) {
          this.#fail('a new message before the last one ended');
          return;
        }
        if (fin) this.handlers.onMessage(opcode, payload);
        else this.#collect(opcode, payload);
        return;
      case OPCODE.continuation:
        if (this.#fragments.length === 0) {
          this.#fail('a continuation frame outside a message');
          return;
        }
        this.#collect(this.#fragmentOpcode, payload);
        if (fin && !this.#failed) {
          const message = Buffer.concat(this.#fragments, this.#fragmentsBytes);
          this.#fragments = [];
          this.#fragmentsBytes = 0;
          this.handlers.onMessage(this.#fragmentOpcode, message);
        }
        return;
      case OPCODE.ping:
        this.handlers.onPing(Buffer.from(payload));
        return;
      case OPCODE.pong:
        return;
      case OPCODE.close:
        this.handlers.onClose(payload.length >= 2 ? payload.readUInt16BE(0) : 1005, payload.subarray(2).toString('utf8'));
        return;
      default:
        this.#fail(`unknown opcode ${opcode}`);
    }
  }

  #collect(opcode: number, payload: Buffer): void {
    this.#fragmentOpcode = opcode;
    this.#fragmentsBytes += payload.length;
    if (this.#fragmentsBytes > this.maxMessageBytes) {
      this.#fail(`a message over ${this.maxMessageBytes} bytes`);
      return;
    }
    // A copy: the chunk the fragment lies in is not kept.
    this.#fragments.push(Buffer.from(payload));
  }

  #fail(message: string): 0 {
    this.#failed = true;
    this.#pending = undefined;
    this.#fragments = [];
    this.handlers.onProtocolError(message);
    return 0;
  }
}

/** A client frame (FIN set, masked as RFC 6455 requires of clients); control frames only carry ≤ 125 bytes. */
export function clientFrame(opcode: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  if (payload.length > 125) throw new RangeError('a control frame carries at most 125 bytes');
  const mask = randomBytes(4);
  const frame = Buffer.allocUnsafe(6 + payload.length);
  frame[0] = 0x80 | opcode;
  frame[1] = 0x80 | payload.length;
  mask.copy(frame, 2);
  for (let index = 0; index < payload.length; index++) frame[6 + index] = (payload[index] as number) ^ (mask[index % 4] as number);
  return frame;
}

/** A close frame with `code`, masked. */
export function closeFrame(code: number): Buffer {
  const payload = Buffer.alloc(2);
  payload.writeUInt16BE(code);
  return clientFrame(OPCODE.close, payload);
}

/** The size of a server frame (unmasked) carrying `payloadBytes`, header included. */
export function serverFrameBytes(payloadBytes: number): number {
  return payloadBytes + (payloadBytes < 126 ? 2 : payloadBytes < 65_536 ? 4 : 10);
}
