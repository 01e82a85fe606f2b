import { backoffDelay, type TransportStats, transportDefaults } from '@rdf-stream/client';
import WebSocket from 'ws';
import { answerCause, countError, countFailure, type Fleet } from './polling-client.js';
import { plannedPortTaken, type SourceEndpoint } from './source-endpoint.js';
import type { FleetClient } from './update-recorder.js';
import { afterClose } from './websocket-client.js';

/**
 * The same WebSocket subscriber as `websocketClient`, on the `ws` library's client (its
 * handshake, framing, pong and close): `--websocket-client ws`, to check that the lean client
 * measures what a well-known client measures. It costs about a fifth more CPU per update and
 * twice the memory per connection (README: "The WebSocket fleet").
 */
export function wsLibraryClient(
  fleet: Fleet,
  client: FleetClient,
  url: URL,
  source: SourceEndpoint | undefined,
  stats: TransportStats,
  onSocket: (socket: WebSocket) => void,
): Promise<void> {
  let lastEventId: string | undefined;
  let attempt = 0;
  return new Promise((resolve) => {
    const open = () => {
      if (fleet.stopping) {
        resolve();
        return;
      }
      const target = new URL(url);
      if (lastEventId !== undefined) target.searchParams.set('lastEventId', lastEventId);
      // ws hands its options to http.request, which takes `localPort` as well as `localAddress`.
      const from = source?.take();
      const socket = new WebSocket(target, { perMessageDeflate: false, maxPayload: transportDefaults.maxEventBytes, ...from });
      onSocket(socket);
      stats.requests++;
      let upgraded = false;
      let refused = false;
      socket.on('upgrade', () => {
        upgraded = true;
        fleet.counters.connected++;
        client.connectedAt ??= Date.now();
      });
      socket.on('unexpected-response', (_request, response) => {
        countError(fleet, answerCause(response.statusCode ?? 0));
        refused = true;
        response.resume();
        socket.terminate();
      });
      socket.on('message', (data: Buffer, isBinary) => {
        const receivedAt = Date.now();
        if (isBinary) return;
        const text = data.toString('utf8');
        const newline = text.indexOf('\n');
        const head = newline < 0 ? text : text.slice(0, newline);
        if (!head.startsWith('element ')) return;
        lastEventId = head.slice('element '.length);
        attempt = 0;
        stats.elements++;
        fleet.updates.record(client, text.slice(newline + 1), receivedAt);
      });
      let portTaken = false;
      socket.on('error', (error: NodeJS.ErrnoException) => {
        // A planned port taken since the plan: connected again from another (on close), not an error of the publisher's.
        if (!upgraded && plannedPortTaken(error, from)) portTaken = true;
        else if (!refused) countFailure(fleet, error); // a refusal is counted once, as such
      });
      socket.on('close', (code: number, reason: Buffer) => {
        if (upgraded) fleet.counters.connected--;
        if (portTaken && !fleet.stopping) {
          open();
          return;
        }
        const advice = refused ? { reconnect: false, floorMs: 0 } : afterClose(code, reason.toString('utf8'));
        if (fleet.stopping || !advice.reconnect) {
          resolve();
          return;
        }
        stats.reconnects++;
        setTimeout(open, backoffDelay(attempt++, transportDefaults.backoff, advice.floorMs));
      });
    };
    open();
  });
}
