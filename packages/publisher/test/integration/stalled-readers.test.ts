import { connect, type Socket } from 'node:net';
import { setTimeout as pace } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { elementIds, openSse, sampleObservations, startTestPublisher, type TestPublisher } from '../../src/testing.js';

let running: TestPublisher | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await running?.close();
  running = undefined;
});

/** A raw client that sends its request and then never reads a byte. */
function neverReading(request: string): Socket {
  const socket = connect(Number(new URL(running!.url).port), '127.0.0.1');
  socket.on('error', () => undefined); // reset when it is cut
  socket.write(request);
  socket.pause();
  sockets.push(socket);
  return socket;
}

const evictedByReason = async () => {
  const metrics = await (await fetch(`${running!.url}/metrics`)).text();
  return Object.fromEntries(
    [...metrics.matchAll(/^rdf_stream_subscribers_evicted_total\{stream="parking",reason="(\w+)"\} (\d+)$/gm)].map((match) => [match[1], Number(match[2])]),
  );
};

// Each kernel queue read one socket at a time (ioctl SIOCOUTQ, the default where it loads), and
// all at once from /proc/net/tcp.
describe.each(['auto', 'table'] as const)('readers that stop reading, at a rate the kernel keeps accepting (real sockets; queues read: %s)', (queueReader) => {
  it('are evicted within subscriberStallTimeoutMs of their last acknowledgement, counting what the kernel holds; a reader beside them loses nothing', async () => {
    // A queue limit never reached, and no write ever refused (the kernel grows the socket's
    // buffer to 4 MiB first): only the bytes the clients acknowledge can tell them apart.
    running = await startTestPublisher({ flags: ['--max-subscriber-queue-bytes', String(1 << 30), '--subscriber-stall-timeout-ms', '1000', '--subscriber-progress-check-ms', '200', '--subscriber-send-queue-reader', queueReader] });
    const reader = await openSse(`${running.url}/streams/parking/events`);
    const stalled = [1, 2, 3].map(() => neverReading('GET /streams/parking/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n'));
    await running!.untilSubscribers(1 + stalled.length);
    // ~6 kB elements ten times a second: each stalled client's own receive buffer (~128 kB) is
    // full within seconds; 1 MiB in all is far less than the kernel accepts before it refuses.
    const element = sampleObservations(running.hub.definition.iri, Array.from({ length: 15 }, (_, index) => index));
    let pushed = 0;
    while (running.subscribers() > 1 && pushed < 200) {
      await running.push(element);
      pushed++;
      await pace(100); // the stream's rate
    }
    expect(running.subscribers()).toBe(1);
    expect(await evictedByReason()).toEqual({ stall: stalled.length });
    await reader.waitForEvents(pushed);
    expect(elementIds(reader.events)).toHaveLength(pushed);
    reader.close();
  });

  it('are evicted when what they left unacknowledged in the kernel passes maxSubscriberQueueBytes, before any stall', async () => {
    running = await startTestPublisher({ flags: ['--max-subscriber-queue-bytes', String(200 * 1024), '--subscriber-stall-timeout-ms', '3600000', '--subscriber-progress-check-ms', '200', '--subscriber-send-queue-reader', queueReader] });
    neverReading('GET /streams/parking/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
    await running!.untilSubscribers(1);
    const element = sampleObservations(running.hub.definition.iri, Array.from({ length: 15 }, (_, index) => index));
    for (let pushed = 0; running.subscribers() === 1 && pushed < 400; pushed++) {
      await running.push(element);
      await pace(20);
    }
    expect(running.subscribers()).toBe(0);
    expect(await evictedByReason()).toEqual({ queue: 1 });
  });

  it('a held long-poll whose client stopped reading the answers before it on its connection is cut, and counted', async () => {
    running = await startTestPublisher({ flags: ['--subscriber-stall-timeout-ms', '1000', '--subscriber-progress-check-ms', '200', '--subscriber-send-queue-reader', queueReader] });
    const element = sampleObservations(running.hub.definition.iri, Array.from({ length: 15 }, (_, index) => index));
    await running.push(element);
    const latest = `${running.url}/streams/parking/latest`;
    const etag = (await fetch(latest, { headers: { accept: 'application/n-triples' } })).headers.get('etag') as string;
    // Forty pipelined polls answered at once (~600 kB: more than the client's receive buffer),
    // then a long-poll held until the next element: its client has read none of the answers.
    const poll = 'GET /streams/parking/latest HTTP/1.1\r\nHost: x\r\nAccept: application/n-triples\r\n\r\n';
    const longPoll = `GET /streams/parking/latest HTTP/1.1\r\nHost: x\r\nAccept: application/n-triples\r\nIf-None-Match: ${etag}\r\nPrefer: wait=60\r\n\r\n`;
    neverReading(poll.repeat(40) + longPoll);
    await running!.untilWaiting(1);
    await running!.untilWaiting(0);
    expect(await evictedByReason()).toEqual({ stall: 1 });
  });
});
