/**
 * What a user's script does: read a few updates of a stream, then stop reading. Run as its own
 * process (`node --import tsx read-and-stop.ts <stream URL> <transport> <count>`): it must exit
 * by itself once the loop is left, with nothing (socket, timer) keeping it alive.
 */
import { subscribe, type TransportName } from '@rdf-stream/client';

const [streamUrl, transport, count] = process.argv.slice(2) as [string, TransportName, string];
let updates = 0;
// Fixed polling at a short interval: the test publishes on demand, not on the stream's schedule.
for await (const event of subscribe(streamUrl, { transport, pollStrategy: 'fixed', pollIntervalMs: 50 })) {
  if (event.type !== 'update') continue;
  console.log(`update ${event.seq}`);
  if (++updates === Number(count)) break;
}
console.log('stopped reading');
// Which WebSocket the websocket transport used: the global one where the platform has it, else `ws`.
console.log(`global WebSocket: ${'WebSocket' in globalThis ? 'yes' : 'no'}`);
