/**
 * The worker thread of `ProcNetTcpSendQueues`: reads the kernel's TCP tables whole, off the
 * publisher's event loop, with synchronous `read()`s (the kernel prints such a table a 4 kB page
 * per `read()`; on this thread each is one system call, not a thread-pool round trip), and sends
 * back each table's text, or null for a table that cannot be read.
 */
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { TableRequest, TableReply } from './kernel-table-protocol.js';

parentPort?.on('message', (request: TableRequest) => {
  const texts = request.files.map((file) => {
    try {
      return readFileSync(file, 'latin1');
    } catch {
      return null; // No such table (another system, or IPv6 disabled).
    }
  });
  parentPort?.postMessage({ id: request.id, texts } satisfies TableReply);
});
