import { GzipEventSplitter } from './gzip-event-splitter.js';
import type { GzipFragmentTexts } from './gzip-fragment-texts.js';

/**
 * One gzip event stream read cheaply: its events found in the compressed bytes
 * (`GzipEventSplitter`) and their text taken from the worker's shared `GzipFragmentTexts`, so
 * that a client inflates nothing of its own. A piece whose text does not end an event (a marker
 * inside compressed data, cut there by chance) is joined to the next one, up to `maxEventBytes`
 * of compressed bytes, after which it is given as it is and the SSE session judges it.
 */
export class GzipEventReader {
  readonly #splitter = new GzipEventSplitter();
  readonly #texts: GzipFragmentTexts;
  readonly #maxEventBytes: number;
  #carried: Buffer | undefined;

  constructor(texts: GzipFragmentTexts, maxEventBytes: number) {
    this.#texts = texts;
    this.#maxEventBytes = maxEventBytes;
  }

  /** The body's next bytes: the text of the events they complete, or undefined. */
  read(chunk: Buffer): string | undefined {
    const pieces = this.#splitter.push(chunk);
    if (pieces.length === 1) return this.#text(pieces[0]!);
    let texts: string | undefined;
    for (const piece of pieces) {
      const text = this.#text(piece);
      if (text !== undefined) texts = texts === undefined ? text : texts + text;
    }
    return texts;
  }

  #text(piece: Buffer): string | undefined {
    const whole = this.#carried === undefined ? piece : Buffer.concat([this.#carried, piece]);
    const text = this.#texts.text(whole);
    if (!text.endsWith('\n\n') && whole.length < this.#maxEventBytes) {
      this.#carried = whole;
      return undefined;
    }
    this.#carried = undefined;
    return text;
  }
}
