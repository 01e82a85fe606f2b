/**
 * The worker thread of `ProcNetTcpSendQueues`: reads the kernel's TCP tables whole, off the
 * publisher's event loop, with synchronous `read()`s (the kernel prints such a table a 4 kB page
 * per `read()`; on this thread each is one system call, not a thread-pool round trip), straight
 * into the memory it shares with the event loop, and answers where each table lies in it. It
 * keeps nothing of its own: no table is copied between the two threads' heaps.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { TableReply, TableRequest } from './kernel-table-protocol.js';

parentPort?.on('message', ({ id, files, shared }: TableRequest) => {
  const bytes = new Uint8Array(shared);
  const ranges: Array<readonly [number, number] | null> = [];
  let offset = 0;
  for (const file of files) {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch {
      ranges.push(null); // No such table (another system, or IPv6 disabled).
      continue;
    }
    try {
      const start = offset;
      let read = 0;
      do {
        read = readSync(fd, bytes, offset, bytes.length - offset, null);
        offset += read;
      } while (read > 0 && offset < bytes.length);
      // Full to the last byte: whether the table ended there is unknown.
      if (offset === bytes.length) {
        parentPort?.postMessage({ id, ranges: [], overflow: true } satisfies TableReply);
        return;
      }
      ranges.push([start, offset]);
    } catch {
      ranges.push(null);
    } finally {
      closeSync(fd);
    }
  }
  parentPort?.postMessage({ id, ranges, overflow: false } satisfies TableReply);
});
