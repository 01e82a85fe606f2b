/**
 * A primary that keeps sending to a worker while it stops (real `node:cluster` workers, the
 * sizes of relayed elements): Node may fail a send after `isConnected()` said yes (EPIPE), which
 * without `sendToWorker` ended the primary — here, the test process (seen in 4 of 6 plain runs).
 */
import cluster from 'node:cluster';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sendToWorker } from '../../src/cluster-send.js';

const stoppingWorker = fileURLToPath(new URL('../support/exiting-worker.mjs', import.meta.url));
/** A message of the size of a relayed element with its compressed copies (bytes). */
const MESSAGE = { type: 'element', bytes: new Uint8Array(256 * 1024) };
/** Workers stopped at most until a send failed (count): in most of them, one does. */
const MAX_WORKERS = 40;

describe('sendToWorker', () => {
  it('drops, and reports, what a stopping worker can no longer receive; the primary keeps running', async () => {
    cluster.setupPrimary({ exec: stoppingWorker, serialization: 'advanced', silent: true });
    const undelivered: Error[] = [];
    let workers = 0;
    while (workers < MAX_WORKERS && undelivered.length === 0) {
      workers++;
      const worker = cluster.fork();
      await once(worker, 'online');
      const exited = once(worker, 'exit');
      worker.process.kill('SIGTERM');
      // Every turn until it has exited, as the primary relays elements and health to every worker.
      const sending = setInterval(() => sendToWorker(worker, MESSAGE, (error) => undelivered.push(error)), 0);
      await exited;
      clearInterval(sending);
    }
    expect(undelivered.length, `${workers} workers stopped`).toBeGreaterThan(0);
    expect((undelivered[0] as NodeJS.ErrnoException).code).toMatch(/^(EPIPE|ECONNRESET|ERR_IPC_CHANNEL_CLOSED)$/);
  }, 30_000);
});
