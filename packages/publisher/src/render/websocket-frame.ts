import { constants, deflateRawSync } from 'node:zlib';
import { elementId, type FormatName, type Gap, gapEventData, webSocketMessageTypes } from '@rdf-stream/protocol';
import * as ws from 'ws';
import type { LoggedElement } from './render-element.js';
import { perElement } from './per-element.js';
import { elementData } from './sse-frame.js';

interface FrameOptions {
  readonly fin: boolean;
  readonly opcode: number;
  readonly mask: boolean;
  readonly readOnly: boolean;
  readonly rsv1: boolean;
}

/**
 * ws' `Sender.frame`: a documented public static of `ws/lib/sender.js` (the frame header and,
 * unless empty, the payload; an unmasked frame's payload is not copied), which @types/ws does
 * not declare.
 */
const { Sender } = ws as unknown as { Sender: { frame(data: Buffer, options: FrameOptions): Buffer[] } };

/**
 * The data WebSocket's frames (`GET /streams/{id}/ws`, docs/protocol.md), built once and written
 * as they are to every socket: never `ws.send()` per subscriber. A server → client message is one
 * unmasked text frame `{type} {argument}\n{body}`; an element's body is exactly its SSE `data:`
 * payload in the same format.
 *
 * Compression (permessage-deflate, RFC 7692) is negotiated with `server_no_context_takeover`, so
 * that every message is compressed on its own — a fresh raw-DEFLATE state, ended by a sync flush
 * whose trailing `00 00 ff ff` is removed — and the same compressed frame (RSV1 set) can be
 * written to every socket that negotiated it. `ws` cannot do this through its API: each of its
 * connections deflates with a state of its own (websockets/ws#1468).
 */

/** Longest close reason (RFC 6455 §5.5: a control frame's payload is at most 125 bytes, 2 of them the code). */
export const MAX_CLOSE_REASON_BYTES = 123;

/** One text message as a frame, uncompressed or compressed (RSV1). */
export interface WebSocketFrames {
  readonly plain: Buffer;
  /** Made on first use, once. */
  readonly deflated: () => Buffer;
}

/** The trailer a sync flush ends with, which permessage-deflate leaves out (RFC 7692 §7.2.1). */
const SYNC_FLUSH_TAIL = Buffer.from([0x00, 0x00, 0xff, 0xff]);

/** Level 9, as the SSE gzip fragments: a message is compressed once and written to thousands of sockets. */
const LEVEL = constants.Z_BEST_COMPRESSION;

/** `payload` compressed on its own, as one permessage-deflate message (tail removed). */
export function deflateMessage(payload: Buffer): Buffer {
  const deflated = deflateRawSync(payload, { level: LEVEL, finishFlush: constants.Z_SYNC_FLUSH });
  const end = deflated.length - SYNC_FLUSH_TAIL.length;
  // A sync flush always ends with the empty stored block's header 00 00 ff ff.
  return end >= 0 && deflated.subarray(end).equals(SYNC_FLUSH_TAIL) ? deflated.subarray(0, end) : deflated;
}

/** One unmasked frame (server → client), header and payload in one buffer: one socket write. */
function frame(payload: Buffer, opcode: number, rsv1: boolean): Buffer {
  const parts = Sender.frame(payload, { fin: true, opcode, mask: false, readOnly: true, rsv1 });
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

const TEXT = 0x1;
const CLOSE = 0x8;
const PING = 0x9;

/** A text frame carrying `payload`, uncompressed. */
export const textFrame = (payload: Buffer): Buffer => frame(payload, TEXT, false);

/** A text frame carrying `payload` compressed (RSV1 set). */
export const deflatedTextFrame = (payload: Buffer): Buffer => frame(deflateMessage(payload), TEXT, true);

/** `payload` as a text message, each of its frames built on first use. */
export function messageFrames(payload: Buffer): WebSocketFrames {
  const plain = textFrame(payload);
  let deflated: Buffer | undefined;
  return Object.freeze({ plain, deflated: () => (deflated ??= deflatedTextFrame(payload)) });
}

/** The heartbeat: a ping without payload, the same two bytes for everyone. */
export const PING_FRAME = frame(Buffer.alloc(0), PING, false);

/** A close frame: code and reason (cut to `MAX_CLOSE_REASON_BYTES`, never inside a character). */
export function closeFrame(code: number, reason = ''): Buffer {
  const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
  payload.writeUInt16BE(code, 0);
  payload.write(reason, 2);
  return frame(payload.subarray(0, 2 + closeReasonBytes(reason)), CLOSE, false);
}

/** Bytes of `reason` that fit a close frame, not cutting a UTF-8 sequence. */
function closeReasonBytes(reason: string): number {
  const bytes = Buffer.from(reason);
  if (bytes.length <= MAX_CLOSE_REASON_BYTES) return bytes.length;
  let end = MAX_CLOSE_REASON_BYTES;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return end;
}

/** An element's message payload: `element {epoch}-{seq}\n` and its SSE data payload. */
export function elementMessage(element: LoggedElement, format: FormatName): Buffer {
  return elementDataMessage(elementId(element.epoch, element.seq), elementData(element, format));
}

/** `element {id}\n{data}`: the message of an element whose SSE data payload is `data` (a document, or its RDF Patch). */
export const elementDataMessage = (id: string, data: string): Buffer => Buffer.from(`${webSocketMessageTypes.element} ${id}\n${data}`);

/** A gap's message payload: `gap\n` and the same JSON as SSE's `event: gap`. */
export const gapMessage = (gap: Gap): Buffer => Buffer.from(`${webSocketMessageTypes.gap}\n${gapEventData(gap)}`);

/**
 * An element's WebSocket frames in `format`: its message built once per element and format
 * (`perElement`; its compressed frame once more, when a socket that negotiated
 * permessage-deflate first needs it), alive as long as the element object (the log's cache holds
 * the recent ones) — as the SSE gzip fragments are.
 */
export const elementFrames: (element: LoggedElement, format: FormatName) => WebSocketFrames = perElement((element, format) =>
  messageFrames(elementMessage(element, format)),
);
