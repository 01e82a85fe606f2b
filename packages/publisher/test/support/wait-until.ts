/**
 * Waits for server-side state that another socket's request changes (a request reaching a
 * handler), which a test cannot subscribe to. Checks once per event-loop turn, never sleeps,
 * and fails after `timeoutMs` so that a broken server fails the test instead of hanging it.
 */
export async function waitUntil(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
