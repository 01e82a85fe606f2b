import type { IncomingMessage } from 'node:http';
import { globalWebSocket, openWhatwgWebSocket, type OpenWebSocket } from './web-socket-connection.js';

/** Largest body of a refused upgrade that is read (a problem+json document is far smaller). */
const MAX_REFUSAL_BODY_BYTES = 64 * 1024;

/**
 * The WebSocket of the platform, for Node (what `#open-web-socket` resolves to outside browsers):
 * the global `WebSocket` where Node has one (22 and later), else the `ws` package, imported only
 * then. Through `ws` a refused upgrade's status and problem+json are read, and reading can pause.
 */
export async function loadWebSocket(): Promise<OpenWebSocket> {
  if (globalWebSocket !== undefined) return openWhatwgWebSocket(globalWebSocket);
  const { default: WebSocket } = await import('ws');
  return (url, listener) => {
    const socket = new WebSocket(url, { followRedirects: false });
    let opened = false;
    let answer: Response | undefined;
    let error: unknown;
    socket.on('open', () => {
      opened = true;
      listener.opened();
    });
    socket.on('message', (data, isBinary) => listener.message(isBinary ? null : String(data)));
    socket.on('unexpected-response', (_request, response) => {
      void readAnswer(response).then((read) => {
        answer = read;
        socket.terminate();
      });
    });
    socket.on('error', (failure) => (error ??= failure));
    socket.on('close', (code, reason) =>
      listener.ended({ code, reason: reason.toString('utf8'), opened, ...(answer === undefined ? {} : { answer }), ...(error === undefined ? {} : { error }) }),
    );
    return { close: (code, reason) => socket.close(code, reason), pause: () => socket.pause(), resume: () => socket.resume() };
  };
}

/** A refused upgrade's answer as a fetch `Response` (its body cut at `MAX_REFUSAL_BODY_BYTES`). */
async function readAnswer(response: IncomingMessage): Promise<Response> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes > MAX_REFUSAL_BODY_BYTES) break;
    }
  } catch {
    // The body is a courtesy: the status says what happened.
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') headers.set(name, value);
  const status = response.statusCode ?? 500;
  return new Response(status >= 200 && status <= 599 && status !== 204 && status !== 304 ? Buffer.concat(chunks) : null, { status: status >= 200 && status <= 599 ? status : 500, headers });
}
