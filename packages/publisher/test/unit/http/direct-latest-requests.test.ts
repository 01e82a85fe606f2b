import { describe, expect, it } from 'vitest';
import { parseDirectLatestRequest } from '../../../src/http/direct-latest-requests.js';

/** A request head as on the wire, without its final empty line. */
const head = (requestLine: string, ...headers: string[]) => [requestLine, ...headers].join('\r\n');

describe('parseDirectLatestRequest', () => {
  it('reads a GET or HEAD of /latest with the headers its answer depends on, names in any case, values trimmed', () => {
    expect(
      parseDirectLatestRequest(
        head(
          'GET /streams/parking/latest HTTP/1.1',
          'Host: 127.0.0.1:8080',
          'ACCEPT: text/turtle',
          'accept-encoding:gzip, br',
          'If-None-Match:  "abc-4-turtle"\t',
          'If-Modified-Since: Fri, 27 Nov 2026 21:00:00 GMT',
          'Prefer: wait=20',
          'Connection: Keep-Alive',
          'User-Agent: test',
        ),
      ),
    ).toEqual({
      head: false,
      streamId: 'parking',
      headers: {
        accept: 'text/turtle',
        'accept-encoding': 'gzip, br',
        'if-none-match': '"abc-4-turtle"',
        'if-modified-since': 'Fri, 27 Nov 2026 21:00:00 GMT',
        prefer: 'wait=20',
        format: undefined,
      },
    });
    expect(parseDirectLatestRequest(head('HEAD /streams/parking/latest?format=jsonld&format=turtle HTTP/1.1', 'Host: x'))).toEqual({
      head: true,
      streamId: 'parking',
      headers: { accept: undefined, 'accept-encoding': undefined, 'if-none-match': undefined, 'if-modified-since': undefined, prefer: undefined, format: 'jsonld' },
    });
  });

  it('reads each request\'s own values, whether the request before sent the same ones or others', () => {
    const read = (stream: string, etag: string, prefer: string) =>
      parseDirectLatestRequest(head(`GET /streams/${stream}/latest HTTP/1.1`, 'Host: x', `If-None-Match: ${etag}`, `Prefer: ${prefer}`));
    const asked = [
      ['parking', '"a-1-turtle"', 'wait=2'],
      ['parking', '"a-1-turtle"', 'wait=2'],
      ['air', '"b-7-turtle"', 'wait=30'],
      ['parking', '"a-1-turtle"', 'wait=2'],
      // latin1 octets, as on the wire, are kept as they came.
      ['parking', '"caf\xe9-\xff"', 'wait=2'],
    ] as const;
    for (const [stream, etag, prefer] of asked) {
      const request = read(stream, etag, prefer);
      expect(request?.streamId).toBe(stream);
      expect(request?.headers['if-none-match']).toBe(etag);
      expect(request?.headers.prefer).toBe(prefer);
    }
  });

  it.each([
    ['another method', head('POST /streams/parking/latest HTTP/1.1', 'Host: x')],
    ['another route', head('GET /streams/parking/events HTTP/1.1', 'Host: x')],
    ['an absolute target', head('GET http://x/streams/parking/latest HTTP/1.1', 'Host: x')],
    ['HTTP/1.0', head('GET /streams/parking/latest HTTP/1.0', 'Host: x')],
    ['two spaces in the request line', head('GET  /streams/parking/latest HTTP/1.1', 'Host: x')],
    ['a request line alone (no Host)', 'GET /streams/parking/latest HTTP/1.1'],
    ['no Host', head('GET /streams/parking/latest HTTP/1.1', 'Accept: text/turtle')],
    ['two Hosts', head('GET /streams/parking/latest HTTP/1.1', 'Host: x', 'host: y')],
    ['a body (Content-Length)', head('GET /streams/parking/latest HTTP/1.1', 'Host: x', 'Content-Length: 0')],
    ['a body (Transfer-Encoding)', head('GET /streams/parking/latest HTTP/1.1', 'Host: x', 'Transfer-Encoding: chunked')],
    ['Connection: close', head('GET /streams/parking/latest HTTP/1.1', 'Host: x', 'Connection: close')],
    ['Connection: keep-alive, Upgrade', head('GET /streams/parking/latest HTTP/1.1', 'Host: x', 'Connection: keep-alive, Upgrade')],
    ['Upgrade', head('GET /streams/parking/latest HTTP/1.1', 'Host: x', 'Upgrade: websocket')],
    ['Expect', head('GET /streams/parking/latest HTTP/1.1', 'Host: x', 'Expect: 100-continue')],
    ['a header it reads, twice', head('GET /streams/parking/latest HTTP/1.1', 'Host: x', 'If-None-Match: "a"', 'If-None-Match: "b"')],
    ['obsolete line folding', head('GET /streams/parking/latest HTTP/1.1', 'Host: x', 'Accept: text/turtle,', ' application/trig')],
    ['a space before the colon', head('GET /streams/parking/latest HTTP/1.1', 'Host: x', 'Accept : text/turtle')],
    ['a line without a colon', head('GET /streams/parking/latest HTTP/1.1', 'Host: x', 'Accept')],
    ['a bare LF', head('GET /streams/parking/latest HTTP/1.1', 'Host: x\nContent-Length: 5')],
    ['a bare CR', head('GET /streams/parking/latest HTTP/1.1', 'Host: x\rContent-Length: 5')],
    ['a control character in a value', head('GET /streams/parking/latest HTTP/1.1', 'Host: x', 'Accept: text/\u0000turtle')],
    ['a control character in the target', head('GET /streams/parking/latest?\u0001 HTTP/1.1', 'Host: x')],
  ])('leaves %s to Node', (_what, requestHead) => {
    expect(parseDirectLatestRequest(requestHead)).toBeUndefined();
  });
});
