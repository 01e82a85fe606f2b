/**
 * The floor the publisher's SSE broadcast is measured against (`broadcast-fanout.ts`): a bare
 * `node:net` server that answers every request with an event-stream head and then, on each
 * `broadcast` message, writes one pre-built chunk (the publisher's own frame, in HTTP/1.1 chunked
 * framing) to every socket with `socket.write`, in batches of `batchSize` that yield to the
 * event loop as the publisher's do. Nothing else: no HTTP parser, no per-subscriber state, no
 * metrics. Reports each broadcast's duration and CPU time over IPC.
 */
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';

type Message =
  | { readonly kind: 'listen'; readonly port: number }
  | { readonly kind: 'broadcast'; readonly frameBase64: string; readonly batchSize: number }
  | { readonly kind: 'close-all' };

const head = Buffer.from(
  'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-store\r\n' +
    'transfer-encoding: chunked\r\n\r\n',
);
const subscribers = new Set<Socket>();

const server = createServer((socket) => {
  let request = '';
  const onData = (chunk: Buffer) => {
    request += chunk.toString('latin1');
    if (!request.includes('\r\n\r\n')) return;
    socket.off('data', onData);
    socket.write(head);
    subscribers.add(socket);
  };
  socket.on('data', onData);
  socket.on('close', () => subscribers.delete(socket));
  socket.on('error', () => undefined);
});

/** A frame in HTTP/1.1 chunked framing: what `res.write(frame)` puts on the wire. */
const chunk = (frame: Buffer) => Buffer.concat([Buffer.from(`${frame.length.toString(16)}\r\n`), frame, Buffer.from('\r\n')]);

process.on('message', (message: Message) => {
  void (async () => {
    if (message.kind === 'listen') {
      server.listen({ port: message.port, host: '127.0.0.1', backlog: 4096 });
      await once(server, 'listening');
      process.send?.({ kind: 'listening' });
    } else if (message.kind === 'broadcast') {
      const bytes = chunk(Buffer.from(message.frameBase64, 'base64'));
      const snapshot = [...subscribers];
      const started = performance.now();
      // CPU time of the batches alone, as the publisher's rdf_stream_broadcast_cpu_seconds.
      let cpuMicros = 0;
      for (let start = 0; start < snapshot.length; start += message.batchSize) {
        const end = Math.min(start + message.batchSize, snapshot.length);
        const cpuBefore = process.cpuUsage();
        for (let index = start; index < end; index++) snapshot[index]!.write(bytes);
        // A write that completed at once finishes on the next tick: part of the batch's cost.
        await new Promise<void>((resolve) => process.nextTick(resolve));
        const cpu = process.cpuUsage(cpuBefore);
        cpuMicros += cpu.user + cpu.system;
        if (end < snapshot.length) await nextTurn();
      }
      const durationMs = performance.now() - started;
      process.send?.({ kind: 'broadcast', durationMs, cpuMs: cpuMicros / 1000, reached: snapshot.length });
    } else {
      for (const socket of subscribers) socket.destroy();
      process.send?.({ kind: 'closed' });
    }
  })();
});
