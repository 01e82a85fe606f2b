import type { ChildProcess } from 'node:child_process';

/**
 * The next message of a client process that `matches` (default: any); rejects when the process
 * ends first (its error is on stderr), where waiting for the message would leave the run waiting
 * for ever. `close` comes after the IPC channel is read to the end, so a message sent just
 * before the process exits is not lost. `what`: what the message says it did, for the error.
 */
export function nextMessage<T>(child: ChildProcess, what: string, matches: (message: unknown) => boolean = () => true): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown) => {
      if (!matches(message)) return;
      child.off('message', onMessage);
      child.off('close', onClose);
      resolve(message as T);
    };
    const onClose = (code: number | null, signal: NodeJS.Signals | null) => {
      child.off('message', onMessage);
      reject(new Error(`a client worker exited with ${signal ?? code} before it ${what} (its error is above)`));
    };
    child.on('message', onMessage);
    child.once('close', onClose);
  });
}
