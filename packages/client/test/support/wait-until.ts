/**
 * Waits for server-side state a test cannot subscribe to (a connection reaching the server).
 * Checks once per event-loop turn, never sleeps, fails after `timeoutMs`.
 */
export async function waitUntil(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
