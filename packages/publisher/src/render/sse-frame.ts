import { elementId, type FormatName } from '@rdf-stream/protocol';
import type { RenderedElement } from '../model/stream-element.js';
import { perElement } from './per-element.js';

/** A Server-Sent Events message (WHATWG HTML §9.2). */
export interface SseMessage {
  readonly id?: string | number;
  readonly event?: string;
  readonly data?: string;
  /** Reconnection time in milliseconds. */
  readonly retry?: number;
  readonly comment?: string;
}

const lineBreak = /\r\n|\r|\n/;
const forbiddenInField = /[\r\n\0]/;

/**
 * Serialises one SSE message. Data and comments are split on every line break the EventSource
 * parser recognises (CR, LF, CRLF), so a value can never start a field of its own; `id` and
 * `event` values containing CR, LF or NUL are refused, since no escaping exists for them.
 */
export function sseFrame(message: SseMessage): string {
  let frame = '';
  if (message.comment !== undefined) {
    for (const line of message.comment.split(lineBreak)) frame += `:${line === '' ? '' : ` ${line}`}\n`;
  }
  if (message.retry !== undefined) {
    if (!Number.isSafeInteger(message.retry) || message.retry < 0) {
      throw new RangeError(`SSE retry must be a non-negative integer, got ${message.retry}`);
    }
    frame += `retry: ${message.retry}\n`;
  }
  if (message.id !== undefined) frame += `id: ${field('id', String(message.id))}\n`;
  if (message.event !== undefined) frame += `event: ${field('event', message.event)}\n`;
  if (message.data !== undefined) {
    for (const line of message.data.split(lineBreak)) frame += `data: ${line}\n`;
  }
  return `${frame}\n`;
}

function field(name: string, value: string): string {
  if (forbiddenInField.test(value)) throw new RangeError(`SSE ${name} must not contain CR, LF or NUL`);
  return value;
}

/** Turtle and the other line-based formats end with a newline; SSE data need not repeat it. */
export const trimFinalNewline = (text: string) => text.replace(/(?:\r\n|\r|\n)$/, '');

/** An element's SSE data payload in `format`: its document, without the final newline. */
export const elementData = (element: RenderedElement, format: FormatName): string =>
  trimFinalNewline(element.documents[format].toString('utf8'));

/**
 * An element's SSE message in `format` (`id: {epoch}-{seq}` and its document as `data:` lines),
 * made from its document when first needed and kept with the element (`perElement`): a
 * broadcast writes one buffer per element and format to every subscriber, never one per
 * subscriber.
 */
export const elementSseFrame: (element: RenderedElement, format: FormatName) => Buffer = perElement((element, format) =>
  Buffer.from(sseFrame({ id: elementId(element.epoch, element.seq), data: elementData(element, format) })),
);
