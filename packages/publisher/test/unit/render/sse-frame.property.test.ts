/**
 * Fuzz: every SSE frame the publisher writes parses, the way a browser parses it
 * (eventsource-parser, WHATWG rules), to exactly the message it was made of — whatever CR, LF,
 * CRLF, NUL, lone surrogate or field-like text its values hold — and to nothing more: no field
 * and no event can be injected. Runs FUZZ_RUNS values per property (test/support/fuzz.ts).
 */
import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type SseMessage, sseFrame } from '../../../src/render/sse-frame.js';
import { FUZZ_RUNS, FUZZ_TIMEOUT_MS, trickyString } from '../../support/fuzz.js';

/** Feeds `chunks` to a browser-like parser and collects what it reports. */
function parse(chunks: readonly string[]) {
  const events: EventSourceMessage[] = [];
  const retries: number[] = [];
  const comments: string[] = [];
  const errors: ParseError[] = [];
  const parser = createParser({
    onEvent: (event) => events.push(event),
    onRetry: (retry) => retries.push(retry),
    onComment: (comment) => comments.push(comment),
    onError: (error) => errors.push(error),
  });
  for (const chunk of chunks) parser.feed(chunk);
  return { events, retries, comments, errors };
}

const lineBreaks = /\r\n|\r|\n/g;
/** A value with no character that `id:` or `event:` cannot carry. */
const fieldValue = trickyString().map((value) => value.replace(/[\r\n\0]/g, ''));

const message: fc.Arbitrary<SseMessage & { data: string }> = fc.record(
  {
    data: trickyString(),
    id: fc.oneof(fieldValue, fc.integer({ min: 0 }), fc.maxSafeNat()),
    event: fieldValue,
    comment: trickyString(),
    retry: fc.maxSafeNat(),
  },
  { requiredKeys: ['data'] },
);

/** What the parser must report for `sent`: WHATWG turns every line break of data into LF, and an empty event type means `message`. */
function expectedEvent(sent: SseMessage & { data: string }): EventSourceMessage {
  return {
    id: sent.id === undefined ? undefined : String(sent.id),
    event: sent.event === undefined || sent.event === '' ? undefined : sent.event,
    data: sent.data.replace(lineBreaks, '\n'),
  };
}

/** `text` as a UTF-8 decoder receives it: lone surrogates are U+FFFD. */
const throughUtf8 = (text: string) => Buffer.from(text, 'utf8').toString('utf8');

/** `text` cut at arbitrary places, as TCP may deliver it. */
const chunked = (text: string, cuts: readonly number[]) => {
  const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
  return [0, ...points].map((start, index) => text.slice(start, [...points, text.length][index]));
};

describe('sseFrame (property)', () => {
  it('a message parses back to exactly one event with the same fields, its retry and its comment lines, and nothing else', () => {
    fc.assert(
      fc.property(message, (sent) => {
        const parsed = parse([sseFrame(sent)]);
        expect(parsed.events).toEqual([expectedEvent(sent)]);
        expect(parsed.retries).toEqual(sent.retry === undefined ? [] : [sent.retry]);
        expect(parsed.comments).toEqual(sent.comment === undefined ? [] : sent.comment.split(lineBreaks));
        expect(parsed.errors).toEqual([]);
      }),
      { numRuns: FUZZ_RUNS },
    );
  }, FUZZ_TIMEOUT_MS);

  it('a stream of frames, cut anywhere and sent as UTF-8, parses to one event per message, in order', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), (sent, cuts) => {
        // On the wire a lone surrogate becomes U+FFFD: framing must not depend on it.
        const parsed = parse(chunked(throughUtf8(sent.map(sseFrame).join('')), cuts));
        const expected = sent.map(expectedEvent).map(({ id, event, data }) => ({
          id: id === undefined ? undefined : throughUtf8(id),
          event: event === undefined ? undefined : throughUtf8(event),
          data: throughUtf8(data),
        }));
        expect(parsed.events).toEqual(expected);
        expect(parsed.errors).toEqual([]);
      }),
      { numRuns: FUZZ_RUNS },
    );
  }, FUZZ_TIMEOUT_MS);

  it('an id or event name with CR, LF or NUL is refused (it has no escape), never written', () => {
    const withBreak = fc
      .tuple(fieldValue, fc.constantFrom('\r', '\n', '\r\n', '\0'), fieldValue)
      .map(([before, bad, after]) => `${before}${bad}${after}`);
    fc.assert(
      fc.property(withBreak, fc.boolean(), (value, asId) => {
        expect(() => sseFrame(asId ? { id: value, data: 'x' } : { event: value, data: 'x' })).toThrow(RangeError);
      }),
      { numRuns: FUZZ_RUNS },
    );
  }, FUZZ_TIMEOUT_MS);

  it('a retry that is not a non-negative integer is refused', () => {
    const badRetry = fc.oneof(fc.integer({ max: -1 }), fc.double().filter((value) => !Number.isSafeInteger(value) || value < 0));
    fc.assert(
      fc.property(badRetry, (retry) => {
        expect(() => sseFrame({ retry, data: 'x' })).toThrow(RangeError);
      }),
      { numRuns: FUZZ_RUNS },
    );
  }, FUZZ_TIMEOUT_MS);
});
