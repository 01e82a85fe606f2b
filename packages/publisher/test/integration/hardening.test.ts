/**
 * Security and robustness regressions. Each case names the weakness it prevents.
 */
import { connect } from 'node:net';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterEach, describe, expect, it } from 'vitest';
import { formatNames } from '../../src/render/formats.js';
import { NegotiationCache } from '../../src/render/negotiate.js';
import { sseFrame } from '../../src/render/sse-frame.js';
import { type RunningPublisher, sampleObservations, startPublisher } from '../support/publisher-fixture.js';
import { readProblem } from '../support/problem.js';
import { parseRdf } from '../support/rdf.js';
import { elementIds, openSse } from '../support/sse-client.js';
import { waitUntil } from '../support/wait-until.js';

let running: RunningPublisher | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const parseFrames = (text: string) => {
  const events: EventSourceMessage[] = [];
  createParser({ onEvent: (event) => events.push(event) }).feed(text);
  return events;
};

/** Sends raw bytes and returns the raw response (for requests fetch refuses to send). */
async function rawRequest(port: number, bytes: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  socket.write(bytes);
  let response = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    response += chunk;
    if (response.includes('\r\n\r\n')) socket.end();
  });
  await new Promise((resolve) => socket.on('close', resolve));
  return response;
}

const injection = 'x\r\n\r\nid: 999\nevent: gap\r\ndata: forged\rretry: 1\n\0';

describe('SSE field injection', () => {
  it('CR, LF, CRLF in data can never start a field or an event of its own', () => {
    const events = parseFrames(sseFrame({ id: 5, data: injection }));
    expect(events).toHaveLength(1);
    expect(events[0]?.id).toBe('5');
    expect(events[0]?.event).toBeUndefined();
  });

  it('CR, LF or NUL in an id or event name is refused, not written', () => {
    for (const bad of ['1\n', '1\r', '1\0', 'a\r\nevent: x']) {
      expect(() => sseFrame({ id: bad })).toThrow(RangeError);
      expect(() => sseFrame({ event: bad })).toThrow(RangeError);
    }
  });

  it.each(formatNames)('observation values with CR/LF/NUL arrive as one %s event that parses back to the same literal', async (format) => {
    running = await startPublisher();
    const connection = await openSse(`${running.url}/streams/parking/events?format=${format}`);
    await waitUntil(() => running!.hub.broadcaster.size === 1);
    const observations = sampleObservations(running.hub.definition.iri, [1]).map((o) => ({ ...o, simpleResult: injection }));
    await running.push(observations);
    await running.push();
    const events = await connection.waitForEvents(2);
    const { epoch } = running.hub.log;
    expect(events.map((event) => [event.id, event.event])).toEqual([
      [`${epoch}-1`, undefined],
      [`${epoch}-2`, undefined],
    ]);
    const quads = await parseRdf(format, events[0]!.data);
    const result = quads.find((q) => q.predicate.value === 'http://www.w3.org/ns/sosa/hasSimpleResult');
    expect(result?.object.value).toBe(injection);
    connection.close();
  });
});

describe('malformed Last-Event-ID', () => {
  it.each(['abc', '-1', '1.5', '1e9', '0x10', '9'.repeat(40), '\u00b9\u00b2', '1,2', 'ABC-1', 'abc-0', 'abc-', '-abc-1', `${'a'.repeat(33)}-1`])(
    'header %j gets 400 problem+json and the server keeps serving',
    async (value) => {
      running ??= await startPublisher();
      const response = await fetch(`${running.url}/streams/parking/events`, { headers: { 'last-event-id': value } });
      expect(response.status).toBe(400);
      expect((await readProblem(response)).code).toBe('PUB_ERR_INVALID_EVENT_ID');
      expect((await fetch(`${running.url}/health`)).status).toBe(200);
    },
  );

  it('a repeated ?lastEventId parameter does not crash the route (first value wins)', async () => {
    running = await startPublisher();
    for (let index = 0; index < 3; index++) await running.push();
    const { epoch } = running.hub.log;
    const connection = await openSse(`${running.url}/streams/parking/events?lastEventId=${epoch}-1&lastEventId=zzz`);
    await connection.waitForEvents(2);
    expect(elementIds(connection.events)).toEqual([`${epoch}-2`, `${epoch}-3`]);
    connection.close();
  });

  it('control bytes in the raw header are answered with 400, never a crash', async () => {
    running = await startPublisher();
    const port = Number(new URL(running.url).port);
    const response = await rawRequest(port, 'GET /streams/parking/events HTTP/1.1\r\nHost: x\r\nLast-Event-ID: 1\x00\x01\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 400/);
    expect(response).toContain('application/problem+json');
    expect((await fetch(`${running.url}/health`)).status).toBe(200);
  });
});

describe('error bodies', () => {
  it('a 500 never carries the error message, a stack trace or a path', async () => {
    running = await startPublisher([], {
      healthCheck: async () => {
        throw new Error('secret at /etc/credentials');
      },
    });
    const response = await fetch(`${running.url}/health`);
    expect(response.status).toBe(500);
    const body = await response.text();
    expect(body).not.toMatch(/secret|credentials|\/etc|\bat\b.*:\d+:\d+|node_modules|\.ts/);
    expect(JSON.parse(body)).toMatchObject({ code: 'PUB_ERR_INTERNAL', status: 500 });
  });

  it('a malformed URL gets 400 problem+json', async () => {
    running = await startPublisher();
    const port = Number(new URL(running.url).port);
    const response = await rawRequest(port, 'GET /streams/%E0%A4%A/latest HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 (400|404)/);
    expect(response).toContain('application/problem+json');
  });
});

describe('lookups by user-supplied names', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])('stream id %j is simply unknown', async (id) => {
    running ??= await startPublisher();
    const response = await fetch(`${running.url}/streams/${id}/latest`);
    expect(response.status).toBe(404);
  });

  it.each(['__proto__', 'constructor', 'toString'])('format %j is rejected', async (format) => {
    running ??= await startPublisher();
    const response = await fetch(`${running.url}/streams/parking/events?format=${format}`);
    expect(response.status).toBe(400);
  });
});

describe('resource exhaustion', () => {
  it('distinct Accept headers cannot grow the negotiation memo beyond its limit', () => {
    const cache = new NegotiationCache(100);
    for (let index = 0; index < 5_000; index++) {
      cache.format(`application/x-${index}, text/turtle;q=0.1`);
      cache.encoding(`x-${index}, gzip`);
    }
    expect(cache.size).toBe(200);
  });

  it('Prefer: wait above maxLongPollWaitSeconds is capped', async () => {
    running = await startPublisher(['--max-long-poll-wait-seconds', '1']);
    await running.push();
    const url = `${running.url}/streams/parking/latest`;
    const etag = (await fetch(url)).headers.get('etag')!;
    const response = await fetch(url, { headers: { 'if-none-match': etag, prefer: 'wait=999999' } });
    expect(response.status).toBe(304);
  });
});
