import { type OutgoingHttpHeaders, STATUS_CODES, validateHeaderName, validateHeaderValue } from 'node:http';

/** What decides the connection's headers of a response written whole (`wireResponse`). */
export interface WireConnection {
  /**
   * The connection stays open for the client's next request: `Connection: keep-alive` with
   * `Keep-Alive: timeout=` this many seconds. `close`: `Connection: close`, the response is the
   * connection's last.
   */
  readonly keepAliveSeconds: number | 'close';
}

/**
 * A whole HTTP/1.1 response as Node's `ServerResponse` puts it on the wire for a response of
 * known length: status line, `headers` in their order, then `Date` (`date`, an HTTP-date) and
 * the connection's headers, a blank line, and `body` (none for a HEAD, whose head still says the
 * body's length). Made once and written to many sockets (held long-polls answered by one
 * element), so it is checked once, as Node checks each header it writes: a name that is not a
 * token or a value with CR, LF or NUL throws rather than split the response.
 */
export function wireResponse(
  status: number,
  headers: Readonly<OutgoingHttpHeaders>,
  body: Buffer | undefined,
  date: string,
  connection: WireConnection,
): Buffer {
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    validateHeaderName(name);
    for (const each of Array.isArray(value) ? value : [value]) {
      const text = String(each);
      validateHeaderValue(name, text);
      head += `${name}: ${text}\r\n`;
    }
  }
  head += `Date: ${date}\r\n`;
  head +=
    connection.keepAliveSeconds === 'close'
      ? 'Connection: close\r\n'
      : `Connection: keep-alive\r\nKeep-Alive: timeout=${connection.keepAliveSeconds}\r\n`;
  head += '\r\n';
  const headBytes = Buffer.from(head, 'latin1');
  return body === undefined || body.length === 0 ? headBytes : Buffer.concat([headBytes, body]);
}
