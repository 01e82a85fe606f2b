import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { elementData, elementSseFrame, sseFrame, trimFinalNewline } from '../../../src/render/sse-frame.js';
import type { LoggedElement } from '../../../src/render/render-element.js';
import { loggedElement } from '../../support/logged-element.js';

/** Parses frames the way a browser does (WHATWG rules, via eventsource-parser). */
function parse(text: string) {
  const events: EventSourceMessage[] = [];
  const retries: number[] = [];
  const comments: string[] = [];
  const parser = createParser({
    onEvent: (event) => events.push(event),
    onRetry: (retry) => retries.push(retry),
    onComment: (comment) => comments.push(comment),
  });
  parser.feed(text);
  return { events, retries, comments };
}

describe('sseFrame', () => {
  it('writes id, event and data fields and ends with a blank line', () => {
    expect(sseFrame({ id: 7, event: 'gap', data: '{"a":1}' })).toBe('id: 7\nevent: gap\ndata: {"a":1}\n\n');
  });

  it('splits multi-line data on LF, CRLF and CR so the parser restores the text with LF', () => {
    const { events } = parse(sseFrame({ id: 1, data: 'one\ntwo\r\nthree\rfour' }));
    expect(events).toEqual([{ id: '1', event: undefined, data: 'one\ntwo\nthree\nfour' }]);
  });

  it('keeps leading spaces of Turtle lines (the parser strips exactly one)', () => {
    const { events } = parse(sseFrame({ data: '<s>\n    <p> <o> .' }));
    expect(events[0]?.data).toBe('<s>\n    <p> <o> .');
  });

  it('writes retry and comments that the parser reports as such', () => {
    const { retries, comments, events } = parse(sseFrame({ comment: 'ok', retry: 2000 }));
    expect(retries).toEqual([2000]);
    expect(comments).toEqual(['ok']);
    expect(events).toEqual([]);
  });

  it('an empty comment is a heartbeat', () => {
    expect(sseFrame({ comment: '' })).toBe(':\n\n');
  });

  it('refuses a negative or fractional retry', () => {
    expect(() => sseFrame({ retry: -1 })).toThrow(RangeError);
    expect(() => sseFrame({ retry: 1.5 })).toThrow(RangeError);
  });

  it('trimFinalNewline removes one final line break only', () => {
    expect(trimFinalNewline('a\n\n')).toBe('a\n');
    expect(trimFinalNewline('a\r\n')).toBe('a');
    expect(trimFinalNewline('a')).toBe('a');
  });
});

describe('elementSseFrame', () => {
  const element = (turtle: string, jsonld: string): LoggedElement => {
    const base = loggedElement(4, new Date(0), 'e1');
    return { ...base, documents: { ...base.documents, turtle: Buffer.from(turtle), jsonld: Buffer.from(jsonld) } };
  };

  it("carries the element's id and its document, whose lines the parser joins again without the final newline", () => {
    const logged = element('@prefix ex: <http://example.org/> .\n\nex:s\n    ex:p ex:o .\n', '{"@id":"x"}');
    const turtle = elementSseFrame(logged, 'turtle');
    expect(turtle.toString()).toBe('id: e1-4\ndata: @prefix ex: <http://example.org/> .\ndata: \ndata: ex:s\ndata:     ex:p ex:o .\n\n');
    expect(parse(turtle.toString()).events).toEqual([{ id: 'e1-4', event: undefined, data: '@prefix ex: <http://example.org/> .\n\nex:s\n    ex:p ex:o .' }]);
    expect(elementSseFrame(logged, 'jsonld').toString()).toBe('id: e1-4\ndata: {"@id":"x"}\n\n');
    expect(elementData(logged, 'turtle')).toBe('@prefix ex: <http://example.org/> .\n\nex:s\n    ex:p ex:o .');
  });

  it('is made once per element and format: every subscriber is written the same buffer', () => {
    const logged = element('<s> <p> <o> .\n', '{}');
    const frame = elementSseFrame(logged, 'turtle');
    expect(elementSseFrame(logged, 'turtle')).toBe(frame);
    expect(elementSseFrame(logged, 'ntriples')).not.toBe(frame);
    expect(elementSseFrame({ ...logged }, 'turtle')).not.toBe(frame);
  });
});
