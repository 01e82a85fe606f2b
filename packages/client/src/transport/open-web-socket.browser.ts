import { globalWebSocket, openWhatwgWebSocket, type OpenWebSocket } from './web-socket-connection.js';

/**
 * Browsers' `WebSocket` (what `#open-web-socket` resolves to under the `browser` condition, so
 * that a page's bundle never holds the `ws` package).
 */
export async function loadWebSocket(): Promise<OpenWebSocket> {
  if (globalWebSocket === undefined) throw new Error('this platform has no WebSocket');
  return openWhatwgWebSocket(globalWebSocket);
}
