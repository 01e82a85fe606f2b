import { describe, expect, it } from 'vitest';
import { wireResponse } from '../../../src/render/wire-response.js';

const date = 'Thu, 26 Nov 2026 06:00:00 GMT';

describe('wireResponse', () => {
  it('writes the status line, the headers in their order, Date and the keep-alive headers, then the body', () => {
    const body = Buffer.from('<a> <b> <c> .\n');
    const bytes = wireResponse(200, { 'content-type': 'text/turtle', 'content-length': String(body.length), etag: '"e-1-turtle"' }, body, date, { keepAliveSeconds: 65 });
    expect(bytes.toString('latin1')).toBe(
      'HTTP/1.1 200 OK\r\ncontent-type: text/turtle\r\ncontent-length: 14\r\netag: "e-1-turtle"\r\n' +
        `Date: ${date}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=65\r\n\r\n<a> <b> <c> .\n`,
    );
  });

  it('writes a 304, or a HEAD answer, without a body, and the last response of a connection with Connection: close', () => {
    const bytes = wireResponse(304, { etag: '"e-1-turtle"', link: ['<a>; rel="describedby"', '<b>; rel="next"'] }, undefined, date, { keepAliveSeconds: 'close' });
    expect(bytes.toString('latin1')).toBe(
      `HTTP/1.1 304 Not Modified\r\netag: "e-1-turtle"\r\nlink: <a>; rel="describedby"\r\nlink: <b>; rel="next"\r\nDate: ${date}\r\nConnection: close\r\n\r\n`,
    );
  });

  it('refuses a header value with CR or LF (response splitting) and a name that is not a token, as Node does', () => {
    expect(() => wireResponse(200, { link: '<x>\r\nset-cookie: a=b' }, undefined, date, { keepAliveSeconds: 5 })).toThrow(/Invalid character/);
    expect(() => wireResponse(200, { 'bad name': 'x' }, undefined, date, { keepAliveSeconds: 5 })).toThrow(/Header name must be a valid HTTP token/);
  });
});
