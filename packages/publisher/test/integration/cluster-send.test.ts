/**
 * A primary sends to a worker that has died before the primary had a turn to notice (killed, as
 * by the OOM killer; real `node:cluster` workers, a message of the size of a relayed element):
 * `isConnected()` still says yes, and the write fails (EPIPE). Without `sendToWorker`'s callback
 * Node emits that as `error` on the worker's process, which ended the primary — here, the test
 * process.
 */
import cluster from 'node:cluster';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sendToWorker } from '../../src/cluster-send.js';

const readingWorker = fileURLToPath(new URL('../support/reading-worker.mjs', import.meta.url));
/** A message of the size of a relayed element with its compressed copies (bytes). */
const MESSAGE = { type: 'element', bytes: new Uint8Array(256 * 1024) };

/**
 * Waits, without returning to the event loop (so that the primary learns nothing of it), until
 * every thread of process `pid` has exited and its descriptors with them: the thread-group leader
 * a zombie and no other task left (the leader turns zombie while its other threads still hold
 * the descriptors). Throws after `timeoutMs`.
 */
function waitUntilGone(pid: number, timeoutMs: number): void {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let gone: boolean;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const state = stat[stat.lastIndexOf(')') + 2];
      gone = (state === 'Z' || state === 'X') && readdirSync(`/proc/${pid}/task`).length <= 1;
    } catch {
      gone = true; // reaped already
    }
    if (gone) return;
    if (Date.now() > deadline) throw new Error(`process ${pid} still running after ${timeoutMs} ms`);
  }
}

describe('sendToWorker', () => {
  it('drops, and reports, what a worker that died unnoticed can no longer receive; the primary keeps running', async () => {
    cluster.setupPrimary({ exec: readingWorker, serialization: 'advanced', silent: true });
    for (let round = 1; round <= 3; round++) {
      const worker = cluster.fork();
      await once(worker, 'online');
      const exited = once(worker, 'exit');
      worker.process.kill('SIGKILL');
      waitUntilGone(worker.process.pid as number, 5_000);
      expect(worker.isConnected(), `round ${round}`).toBe(true);
      const undelivered: Error[] = [];
      sendToWorker(worker, MESSAGE, (error) => undelivered.push(error));
      await exited;
      expect(undelivered, `round ${round}`).toHaveLength(1);
      expect((undelivered[0] as NodeJS.ErrnoException).code, `round ${round}`).toMatch(/^(EPIPE|ECONNRESET)$/);
    }
  }, 30_000);
});
