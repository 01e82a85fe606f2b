import { connect } from 'node:net';
import { FrameReader, handshakeKey, OPCODE, serverFrameBytes } from '../fleet/websocket-frames.js';

/** How long reading one element's frame may take (ms). */
const FRAME_READ_TIMEOUT_MS = 5_000;

/**
 * One element as a WebSocket subscriber gets it, in bytes on the wire: the stream resumed just
 * before element `{epoch}-{seq}` sends that element as one text message (`element {id}\n` and
 * the document); the frame's header (2, 4 or 10 bytes: unmasked) is added to its payload.
 * Resolves null when the publisher has no WebSocket endpoint (the upgrade is refused).
 */
export function websocketFrameBytes(wsUrl: string, epoch: string, seq: number): Promise<number | null> {
  const url = new URL(wsUrl);
  url.searchParams.set('lastEventId', `${epoch}-${seq - 1}`);
  const { key } = handshakeKey();
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port || 80) });
    const timer = setTimeout(() => finish(new Error('no element frame within the time allowed')), FRAME_READ_TIMEOUT_MS);
    const finish = (result: number | null | Error) => {
      clearTimeout(timer);
      socket.destroy();
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const reader = new FrameReader(
      {
        onMessage: (opcode, payload) => {
          if (opcode === OPCODE.text && payload.subarray(0, 8).toString('latin1') === 'element ') finish(serverFrameBytes(payload.length));
        },
        onPing: () => undefined,
        onClose: (code) => finish(new Error(`closed with ${code} before the element`)),
        onProtocolError: (message) => finish(new Error(message)),
      },
      16 * 1024 * 1024,
    );
    let head = Buffer.alloc(0);
    let upgraded = false;
    socket.on('data', (chunk: Buffer) => {
      if (upgraded) {
        reader.push(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      if (!head.subarray(0, 12).toString('latin1').startsWith('HTTP/1.1 101')) {
        finish(null);
        return;
      }
      upgraded = true;
      reader.push(head.subarray(end + 4));
    });
    socket.on('error', (error) => finish(error));
    socket.on('close', () => finish(new Error('the connection closed before the element')));
    socket.write(
      `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
  });
}
