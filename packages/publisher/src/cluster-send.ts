import type { Serializable } from 'node:child_process';
import type { Worker } from 'node:cluster';

/**
 * Sends `message` to a cluster worker, if it is still connected; what the worker can no longer
 * receive is dropped (`onUndelivered` is told). A worker that is exiting (a stop, a crash, the OOM
 * killer) can close its channel after `isConnected()` said it was open: a `send` without a
 * callback then makes Node emit `error` (`EPIPE`) on the worker's process, possibly after the
 * cluster has removed its listeners, which ends the primary, and with it every other worker and
 * their subscribers. With a callback, the error goes to the callback. The message is lost with
 * the worker, whose exit is handled where it belongs (`exit`: replaced, or the stop goes on).
 */
export function sendToWorker(worker: Pick<Worker, 'isConnected' | 'send'>, message: Serializable, onUndelivered: (error: Error) => void = () => {}): void {
  if (!worker.isConnected()) return;
  worker.send(message, (error) => {
    if (error) onUndelivered(error);
  });
}
