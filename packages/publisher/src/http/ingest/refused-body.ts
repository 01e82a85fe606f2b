import type { IncomingMessage } from 'node:http';

/**
 * The rest of a refused request's body (413, 401, 415… answered before the body was read), read
 * and thrown away, so that the answer reaches a client that writes its whole body before it
 * reads: a socket closed with unread bytes in it is reset by the kernel, and the client gets
 * `EPIPE` or `ECONNRESET` instead of the answer. At most `maxBytes` are read: returns false, and
 * reads nothing, when the body announces more (the caller closes the connection after the
 * answer); a body without a length that goes on beyond `maxBytes` has its connection destroyed.
 * Once the body is read the connection may serve the next request.
 */
export function discardRefusedBody(request: IncomingMessage, maxBytes: number): boolean {
  if (request.complete) return true;
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return false;
  let discarded = 0;
  request.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > maxBytes) request.socket.destroy();
  });
  request.resume();
  return true;
}
